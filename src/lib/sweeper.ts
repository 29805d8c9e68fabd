import type { Logger } from 'pino';
import { Pause, type Worker } from './worker.js';

/** Rows deleted by one statement: a pass never holds a long transaction. */
export const SWEEP_BATCH = 1000;

/**
 * A loop that deletes what has outlived its use every `everyMs`, a batch at a time (run where
 * the background loops run: the `all` and `worker` roles). `deleteBatch(limit)` deletes at most
 * `limit` rows of each kind it sweeps and answers the most it deleted of one kind; a pass ends
 * when that is below `limit`. Any number of sweepers may run at once.
 */
export class Sweeper implements Worker {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new Pause();

  constructor(
    readonly name: string,
    /** What it deletes, for its log line (e.g. "expired idempotency keys"). */
    private readonly what: string,
    private readonly deleteBatch: (limit: number) => Promise<number>,
    private readonly logger: Logger,
    private readonly everyMs = 60_000,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
  }

  /** One pass: everything due, a batch at a time. Answers how many batches' worth it deleted. */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.deleteBatch(SWEEP_BATCH);
      total += n;
      if (n < SWEEP_BATCH || !this.running) return total;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.sweep();
      } catch (err) {
        this.logger.warn({ err }, `sweeping ${this.what} failed; retrying later`);
      }
      // A stop during the pass woke no one: it must not wait a whole period to be seen.
      if (this.running) await this.pause.wait(this.everyMs);
    }
  }
}
