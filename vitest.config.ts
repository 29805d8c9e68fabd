import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests use the SDK from its source, as the workspace package it is (sdk/, '@ons/sdk').
  resolve: {
    alias: {
      '@ons/sdk/cli': fileURLToPath(new URL('./sdk/src/cli/ons-verify.ts', import.meta.url)),
      '@ons/sdk': fileURLToPath(new URL('./sdk/src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    globalSetup: ['test/build-setup.ts', 'test/global-setup.ts', 'test/console/build-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
