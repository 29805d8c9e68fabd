import { describe } from 'vitest';

/**
 * `describe` for tests that need a part of the machine the service itself does not (Debian's
 * Chromium, a `redis-server` binary). Without it a local `npm test` skips them and says so;
 * with `ONS_TEST_STRICT` set (.ci/run sets it, after installing both) a missing part fails the
 * file instead, so CI can never pass by skipping them.
 */
export function describeIf(present: boolean, what: string): typeof describe {
  if (present) return describe;
  if (process.env.ONS_TEST_STRICT) {
    throw new Error(
      `${what} is missing, and ONS_TEST_STRICT forbids skipping the tests that need it`,
    );
  }
  console.warn(`skipped: these tests need ${what}`);
  return describe.skip as typeof describe;
}
