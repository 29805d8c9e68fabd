import type { Logger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Worker } from '../../lib/worker.js';
import { recordLastUsed } from './repo.js';

/** How often the batch is written (docs/api.md, "API keys": last_used_at may lag ~a minute). */
export const LAST_USED_FLUSH_MS = 15_000;

/** Uses closer together than this are not noted again (the column may lag ~a minute). */
const RESOLUTION_MS = 1_000;

/**
 * Collects key uses in memory (latest time per key) so a request never writes to the
 * database; the worker writes the batch every LAST_USED_FLUSH_MS and once more at shutdown.
 */
export class LastUsedRecorder implements Worker {
  readonly name = 'api-key-last-used';
  // Epoch milliseconds, not Dates: a Date kept per key until the next request outlives the
  // young generation and made measurable garbage-collection work on the hot path.
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly db: Executor,
    private readonly logger: Logger,
    private readonly intervalMs = LAST_USED_FLUSH_MS,
  ) {}

  /**
   * Notes that key `id` was used at `at` (hot path). A use within RESOLUTION_MS after the
   * one noted changes nothing, so a busy key costs a map read per request.
   */
  touch(id: string, at: Date): void {
    const ms = at.getTime();
    const seen = this.pending.get(id);
    if (seen === undefined || ms - seen >= RESOLUTION_MS) this.pending.set(id, ms);
  }

  /** Uses noted but not yet written (for tests and diagnostics). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Writes what was collected. A failed write puts the uses back for the next round. */
  async flush(): Promise<void> {
    if (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = (async () => {
      try {
        await recordLastUsed(
          this.db,
          [...batch].map(([id, ms]) => ({ id, at: new Date(ms) })),
        );
      } catch (err) {
        this.logger.warn({ err, keys: batch.size }, 'could not record API key use; will retry');
        for (const [id, ms] of batch) {
          const seen = this.pending.get(id);
          if (seen === undefined || seen < ms) this.pending.set(id, ms);
        }
      } finally {
        this.flushing = null;
      }
    })();
    await this.flushing;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
