import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Three tiers (docs/testing.md), each a vitest project run on its own by `npm run test:NAME`;
 * `npm test` runs all three (scripts/test.ts).
 *
 * - unit: the tests beside the code (src/, sdk/, console/, bench/): no database, no browser,
 *   no global setup.
 * - integration: test/, grouped in folders by feature: one PostgreSQL for the run (a
 *   database cloned per test file) and the service built to dist/ for the tests that start
 *   it as a process.
 * - browser: test/console/, the console built and driven in Debian's Chromium.
 *
 * `isolate: false`: a worker runs its test files one after another in one module graph
 * instead of a fresh one per file. Loading the service's graph (Fastify, viem, the modules)
 * took most of an integration file's time; no test relies on a fresh module state (no module
 * mocks, no process.env writes; each file starts its own service on its own database).
 */
const BROWSER = ['test/console/**/*.test.ts'];

export default defineConfig({
  // Tests use the SDK from its source, as the workspace package it is (sdk/, '@ons/sdk').
  resolve: {
    alias: {
      '@ons/sdk/cli': fileURLToPath(new URL('./sdk/src/cli/ons-verify.ts', import.meta.url)),
      '@ons/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)),
    },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'src/**/*.test.ts',
            'sdk/**/*.test.ts',
            'console/src/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          exclude: [...configDefaults.exclude, 'sdk/dist/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...BROWSER],
          globalSetup: ['test/build-setup.ts', 'test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: BROWSER,
          globalSetup: ['test/global-setup.ts', 'test/console/build-setup.ts'],
        },
      },
    ],
  },
});
