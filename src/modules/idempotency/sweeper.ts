import type { Logger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Pause, type Worker } from '../../lib/worker.js';
import { deleteExpired } from './repo.js';

/** Keys deleted by one statement: a pass never holds a long transaction. */
const BATCH = 1000;

/**
 * Deletes expired idempotency keys every `everyMs` (run where the background loops run:
 * the `all` and `worker` roles). Any number of sweepers may run at once.
 */
export class IdempotencySweeper implements Worker {
  readonly name = 'idempotency-sweeper';
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new Pause();

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
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

  /** One pass: every expired key, a batch at a time. Answers how many were deleted. */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await deleteExpired(this.db, this.clock.now(), BATCH);
      total += n;
      if (n < BATCH || !this.running) return total;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.sweep();
      } catch (err) {
        this.logger.warn({ err }, 'sweeping expired idempotency keys failed; retrying later');
      }
      await this.pause.wait(this.everyMs);
    }
  }
}
