import type { Linter } from 'eslint';

/** The layer rules of eslint.boundaries.js, typed for src/lint-boundaries.test.ts. */
export declare const boundaries: Linter.Config[];
