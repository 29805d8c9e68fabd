import type { ApplyOutcome, VerifiedAction } from './types.js';

export interface GroupCommitOptions {
  /** How long the first action of an idle organization waits for company (ms). */
  maxWaitMs: number;
  /** Most actions applied in one transaction. */
  maxGroup: number;
}

/** Applies one organization's group in one transaction; one outcome per item, in order. */
export type ApplyGroupFn = (
  orgId: string,
  items: readonly VerifiedAction[],
) => Promise<ApplyOutcome[]>;

interface Entry {
  item: VerifiedAction;
  resolve: (o: ApplyOutcome) => void;
  reject: (err: unknown) => void;
}

interface Lane {
  queue: Entry[];
  running: boolean;
  timer: NodeJS.Timeout | null;
}

/**
 * Per-organization group commit (design.md §8). Every organization has a lane: verified
 * actions queue there; a lane runs at most one transaction at a time, and whatever arrives
 * while one is in flight goes into the next, so the group size follows the load (one
 * balance-row lock and one disk flush per group instead of per action). An idle lane waits
 * `maxWaitMs` for company before it commits. Lanes of different organizations run in
 * parallel, bounded by the database pool.
 */
export class GroupCommitter {
  private readonly lanes = new Map<string, Lane>();
  private readonly idleWaiters: (() => void)[] = [];
  /** Groups committed and actions in them, for the benchmark and metrics. */
  readonly stats = { groups: 0, actions: 0 };

  constructor(
    private readonly apply: ApplyGroupFn,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Queues a verified action; resolves when its group has committed (or refused it). */
  submit(item: VerifiedAction): Promise<ApplyOutcome> {
    return new Promise<ApplyOutcome>((resolve, reject) => {
      const orgId = item.payerOrgId;
      let lane = this.lanes.get(orgId);
      if (!lane) {
        lane = { queue: [], running: false, timer: null };
        this.lanes.set(orgId, lane);
      }
      lane.queue.push({ item, resolve, reject });
      this.schedule(orgId, lane);
    });
  }

  /** Resolves once every queued action has been applied (used on shutdown). */
  drain(): Promise<void> {
    if (this.lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(orgId: string, lane: Lane): void {
    if (lane.running) return; // the running group's completion starts the next one
    if (lane.queue.length >= this.options.maxGroup || this.options.maxWaitMs <= 0) {
      if (lane.timer) clearTimeout(lane.timer);
      lane.timer = null;
      if (this.options.maxWaitMs <= 0) setImmediate(() => this.run(orgId, lane));
      else this.run(orgId, lane);
      return;
    }
    lane.timer ??= setTimeout(() => {
      lane.timer = null;
      this.run(orgId, lane);
    }, this.options.maxWaitMs);
  }

  private run(orgId: string, lane: Lane): void {
    if (lane.running || lane.queue.length === 0) return;
    lane.running = true;
    const group = lane.queue.splice(0, this.options.maxGroup);
    void this.apply(
      orgId,
      group.map((e) => e.item),
    )
      .then(
        (outcomes) => {
          this.stats.groups++;
          this.stats.actions += group.length;
          group.forEach((e, i) => e.resolve(outcomes[i]!));
        },
        (err: unknown) => group.forEach((e) => e.reject(err)),
      )
      .finally(() => {
        lane.running = false;
        if (lane.queue.length > 0) {
          // Actions that queued during the transaction form the next group at once.
          this.run(orgId, lane);
        } else if (!lane.timer) {
          this.lanes.delete(orgId);
          if (this.lanes.size === 0) this.idleWaiters.splice(0).forEach((w) => w());
        }
      });
  }
}
