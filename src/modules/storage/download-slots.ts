import { AppError, Code } from '../../lib/errors.js';

/** The `Retry-After` of a download refused for want of a slot, in seconds. */
export const DOWNLOAD_RETRY_S = 1;

/**
 * Downloads being sent at once, per process (STORAGE_MAX_DOWNLOADS; docs/self-hosting.md,
 * "Slow clients"). Each holds a file descriptor (or a connection to S3) and a chunk of the
 * file until its client has read it all or is cut, so clients that read slowly, or not at
 * all, could otherwise take every descriptor. Past the bound a download is refused at once
 * with 503 code 14 and `Retry-After`, rather than queued: a queued request would hold its
 * connection all the same.
 */
export class DownloadSlots {
  private taken = 0;

  constructor(private readonly max: number) {}

  get inUse(): number {
    return this.taken;
  }

  /** Takes a slot, or throws the 503; the function returned gives it back (once, however often called). */
  take(): () => void {
    if (this.taken >= this.max) {
      throw new AppError(
        Code.UNAVAILABLE,
        'too many files are being downloaded from this server; retry later',
        { retry_after_seconds: DOWNLOAD_RETRY_S },
      );
    }
    this.taken++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken--;
    };
  }
}
