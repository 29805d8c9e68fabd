import type { Logger } from 'pino';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Pause, type Worker } from '../../lib/worker.js';
import { deleteFinishedBefore, tryRetentionLock } from './repo/retention.js';

const DAY_MS = 24 * 60 * 60_000;

export interface RetentionOptions {
  /** Most deliveries one statement deletes (5,000). */
  chunk?: number;
  /** The rest between two chunks of one pass (100 ms). */
  restMs?: number;
  /** How often a pass starts (every minute). */
  everyMs?: number;
}

/**
 * The deliveries' retention (docs/webhooks.md, "How long deliveries are kept";
 * WEBHOOK_DELIVERY_RETENTION_DAYS): deliveries that ended (`done`, `failed`, `stopped`) are
 * deleted once they were created longer ago than the retention; queued ones (`pending`,
 * `retrying`) never are. A loop where the background loops run (the `all` and `worker`
 * roles; src/container.ts, src/worker-service.ts) starts a pass every minute; a pass deletes
 * what is due a chunk at a time, each chunk one short transaction, with a rest between two,
 * so it never holds many locks for long nor keeps the database busy for the execute path's
 * statements. Any number of processes may run it: one prunes at a time (an advisory lock
 * taken by each chunk's transaction), the others find it held and end their pass.
 */
export class DeliveryRetention implements Worker {
  readonly name = 'webhook-retention';
  private readonly chunk: number;
  private readonly restMs: number;
  private readonly everyMs: number;
  private total = 0;
  private running = false;
  /** Set by stop(): a pass in progress ends after its current chunk. */
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new Pause();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** WEBHOOK_DELIVERY_RETENTION_DAYS; 0 keeps every delivery (nothing is pruned). */
    readonly days: number,
    opts: RetentionOptions = {},
  ) {
    this.chunk = opts.chunk ?? 5_000;
    this.restMs = opts.restMs ?? 100;
    this.everyMs = opts.everyMs ?? 60_000;
  }

  /** Deliveries this process has pruned since it started (/metrics). */
  get pruned(): number {
    return this.total;
  }

  /** Ended deliveries created before this instant are due to be pruned; null: none ever are. */
  horizon(now: Date): Date | null {
    return this.days === 0 ? null : new Date(now.getTime() - this.days * DAY_MS);
  }

  /**
   * One pass: deletes every ended delivery created before `now`'s horizon, a chunk at a time
   * with a rest between two; answers how many it deleted. It ends early when the loop is
   * stopped, and at once when another process is pruning.
   */
  async pruneDeliveries(now: Date): Promise<number> {
    const before = this.horizon(now);
    if (before === null) return 0;
    let deleted = 0;
    for (;;) {
      const n = await this.db.transaction(async (tx) =>
        (await tryRetentionLock(tx)) ? deleteFinishedBefore(tx, before, this.chunk) : null,
      );
      if (n === null) break;
      deleted += n;
      this.total += n;
      if (n < this.chunk || this.stopping) break;
      await this.pause.wait(this.restMs);
      if (this.stopping) break;
    }
    if (deleted > 0) {
      this.logger.debug(
        { deliveries: deleted, before: before.toISOString() },
        'webhook deliveries past their retention deleted',
      );
    }
    return deleted;
  }

  /** Starts the loop; with a retention of 0 there is nothing to do and no loop. */
  start(): void {
    if (this.running || this.days === 0) return;
    this.running = true;
    this.stopping = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.running = false;
    this.pause.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.pruneDeliveries(this.clock.now());
      } catch (err) {
        this.logger.warn({ err }, 'pruning webhook deliveries failed; retrying later');
      }
      // A stop during the pass woke no one: it must not wait a whole period to be seen.
      if (this.running) await this.pause.wait(this.everyMs);
    }
  }
}
