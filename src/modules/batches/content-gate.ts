import { AppError, Code } from '../../lib/errors.js';
import { SlotGate } from '../../lib/slot-gate.js';

/**
 * Builds of sealed batches' contents at once, per process (docs/batches.md, "Content and
 * `ipfs_url`"). A build reads the batch's action rows and writes the content on the event
 * loop: up to ~0.7 s and ~17 MB for a batch of 1,000 actions with 16 KB of custom data each.
 */
export const CONTENT_BUILD_SLOTS = 2;
/** How long a build waits for a slot before its requests are answered 503. */
export const CONTENT_BUILD_WAIT_MS = 2_000;
/** Builds that may wait for a slot; one more is refused at once. */
export const CONTENT_BUILD_QUEUE = 16;
/** The `Retry-After` of a refused build, in seconds. */
export const CONTENT_BUILD_RETRY_S = 1;

/** The gate of the content builds, refusing with 503 code 14 and `Retry-After`. */
export function contentBuildGate(
  opts: { slots?: number; maxWaitMs?: number; maxWaiting?: number } = {},
): SlotGate {
  return new SlotGate(
    opts.slots ?? CONTENT_BUILD_SLOTS,
    opts.maxWaitMs ?? CONTENT_BUILD_WAIT_MS,
    opts.maxWaiting ?? CONTENT_BUILD_QUEUE,
    () =>
      new AppError(Code.UNAVAILABLE, 'too many batch contents are being built; retry later', {
        retry_after_seconds: CONTENT_BUILD_RETRY_S,
      }),
  );
}
