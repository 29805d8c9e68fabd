import type { Linter } from 'eslint';

/** The layer rules of eslint.boundaries.js, typed for test/lint-boundaries.test.ts. */
export declare const boundaries: Linter.Config[];
