import type { ServerResponse } from 'node:http';
import { pipeline, Transform, type Readable } from 'node:stream';
import { AppError, Code } from '../../lib/errors.js';

/** The `Retry-After` of a download refused for want of a slot, in seconds. */
export const DOWNLOAD_RETRY_S = 1;

/** The longest delay a Node timer takes (about 24.8 days): a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Downloads being sent at once, per process (STORAGE_MAX_DOWNLOADS), and per client address
 * among them (STORAGE_MAX_DOWNLOADS_PER_CLIENT; docs/self-hosting.md, "Slow clients"). Each
 * holds a file descriptor (or a connection to S3) and a chunk of the file until its client
 * has read it all or is cut, so clients that read slowly, or not at all, could otherwise take
 * every descriptor; and one client alone could otherwise take every slot. Past either bound a
 * download is refused at once with 503 code 14 and `Retry-After`, rather than queued: a queued
 * request would hold its connection all the same.
 */
export class DownloadSlots {
  private taken = 0;
  /**
   * Slots held, by client. An entry goes when its count is back to 0, so there are never more
   * entries than slots taken (at most `max`), however many clients come and go.
   */
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly maxPerClient: number,
  ) {}

  get inUse(): number {
    return this.taken;
  }

  /** Clients holding a slot now. */
  get clients(): number {
    return this.byClient.size;
  }

  /**
   * Takes a slot for `client` (src/lib/client-network.ts `clientSubject`, the key per-address
   * rate limits count under), or throws the 503; the function returned gives it back (once,
   * however often called).
   */
  take(client: string): () => void {
    const held = this.byClient.get(client) ?? 0;
    if (held >= this.maxPerClient) {
      throw new AppError(
        Code.UNAVAILABLE,
        `too many files are being downloaded by this client at once (at most ${this.maxPerClient}); retry when one is done`,
        { retry_after_seconds: DOWNLOAD_RETRY_S, max_downloads_per_client: this.maxPerClient },
      );
    }
    if (this.taken >= this.max) {
      throw new AppError(
        Code.UNAVAILABLE,
        'too many files are being downloaded from this server; retry later',
        { retry_after_seconds: DOWNLOAD_RETRY_S },
      );
    }
    this.taken++;
    this.byClient.set(client, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.taken--;
      const left = (this.byClient.get(client) ?? 1) - 1;
      if (left > 0) this.byClient.set(client, left);
      else this.byClient.delete(client);
    };
  }
}

/** How slowly a download may go before it is cut (docs/self-hosting.md, "Slow clients"). */
export interface DownloadPace {
  /** HTTP_IDLE_TIMEOUT_MS: a download that reads nothing this long is cut. */
  stallMs: number;
  /** STORAGE_DOWNLOAD_GRACE_MS: what every download may take beside its size's share. */
  graceMs: number;
  /** STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND: the slowest average a download may go at. */
  minBytesPerSecond: number;
}

/**
 * How long a download of `size` bytes may take to be read whole: the grace, then the file
 * at the minimum rate (a longer wait than a timer takes is no wait at all).
 */
export function downloadDeadlineMs(size: number, pace: DownloadPace): number {
  const ms = pace.graceMs + Math.ceil((size * 1000) / pace.minBytesPerSecond);
  return Math.min(ms, MAX_TIMER_MS);
}

/**
 * The body to send for a download of `size` bytes, cut (its connection destroyed) when the
 * client has taken nothing for `stallMs`, or has not taken the whole file by
 * `downloadDeadlineMs`: a client reading a little just often enough not to stall would
 * otherwise hold its slot for as long as it likes. The file is read only as the socket takes
 * it, so a chunk read is the client's progress. Node's own idle timer would cut a stalled
 * connection too, but only after one to two times the timeout: it waits once more when the
 * socket's queue shrank since the last write (docs/self-hosting.md, "Slow clients"). Once the
 * whole file is read, what remains in the socket's buffers is left to that timer: a slow
 * client still reading them is making progress, and holds no file.
 */
export function cutWhenSlow(
  body: Readable,
  res: ServerResponse,
  size: number,
  pace: DownloadPace,
): Readable {
  const cut = () => res.destroy();
  const stall = setTimeout(cut, pace.stallMs);
  const deadline = setTimeout(cut, downloadDeadlineMs(size, pace));
  stall.unref();
  deadline.unref();
  const stop = () => {
    clearTimeout(stall);
    clearTimeout(deadline);
  };
  const progress = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      stall.refresh();
      done(null, chunk);
    },
    flush(done) {
      stop();
      done();
    },
  });
  res.once('close', stop);
  // Either side's end or failure ends the other: the descriptor is closed however it ends.
  pipeline(body, progress, () => stop());
  return progress;
}
