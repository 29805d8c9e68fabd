import type { ApplyOutcome, VerifiedAction } from './types.js';

export interface GroupCommitOptions {
  /** How long the first action of a group waits for company (ms). */
  maxWaitMs: number;
  /** Most actions applied in one transaction. */
  maxGroup: number;
  /** Most transactions of one organization in flight at once. */
  maxConcurrent: number;
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
  running: number;
  /** Wallets and objects that a group in flight touches. */
  busyWallets: Map<string, number>;
  busyObjects: Map<string, number>;
  timer: NodeJS.Timeout | null;
}

/** The object an action touches (a mint makes a new one, so none). */
function objectOf(item: VerifiedAction): string | null {
  const id = item.action.name === 'mint' ? undefined : item.action.params.object_id;
  return typeof id === 'string' ? id : null;
}

function add(m: Map<string, number>, key: string) {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function remove(m: Map<string, number>, key: string) {
  const n = (m.get(key) ?? 0) - 1;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}

/**
 * Per-organization group commit (design.md §8). Verified actions queue in their
 * organization's lane and are applied in groups, one transaction each, so the balance row,
 * the disk flush and the round trips are paid once per group instead of once per action.
 *
 * Up to `maxConcurrent` groups of one lane run at once. Groups in flight never share a
 * wallet or an object: an action whose wallet or object is busy waits for the next group,
 * and so does every later action of that wallet or object, so each wallet's nonces and each
 * object's history still apply in arrival order. Concurrent groups meet only at the
 * organization's balance row, which each takes last, just before it commits
 * (apply-group.ts), so one group's commit overlaps the next group's work.
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
        lane = {
          queue: [],
          running: 0,
          busyWallets: new Map(),
          busyObjects: new Map(),
          timer: null,
        };
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
    if (lane.running >= this.options.maxConcurrent) return; // a completion starts the next
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

  /** Takes the next group: queued actions whose wallet and object no running group has. */
  private take(lane: Lane): Entry[] {
    const group: Entry[] = [];
    const rest: Entry[] = [];
    const blockedWallets = new Set<string>();
    const blockedObjects = new Set<string>();
    for (const e of lane.queue) {
      const wallet = e.item.walletId;
      const object = objectOf(e.item);
      const blocked =
        group.length >= this.options.maxGroup ||
        lane.busyWallets.has(wallet) ||
        blockedWallets.has(wallet) ||
        (object !== null && (lane.busyObjects.has(object) || blockedObjects.has(object)));
      if (blocked) {
        // Everything after a held action of the same wallet or object waits with it.
        blockedWallets.add(wallet);
        if (object !== null) blockedObjects.add(object);
        rest.push(e);
      } else {
        group.push(e);
      }
    }
    lane.queue = rest;
    return group;
  }

  private run(orgId: string, lane: Lane): void {
    while (lane.running < this.options.maxConcurrent && lane.queue.length > 0) {
      const group = this.take(lane);
      if (group.length === 0) return; // everything queued waits for a running group
      this.start(orgId, lane, group);
    }
  }

  private start(orgId: string, lane: Lane, group: Entry[]): void {
    lane.running++;
    for (const e of group) {
      add(lane.busyWallets, e.item.walletId);
      const object = objectOf(e.item);
      if (object !== null) add(lane.busyObjects, object);
    }
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
        lane.running--;
        for (const e of group) {
          remove(lane.busyWallets, e.item.walletId);
          const object = objectOf(e.item);
          if (object !== null) remove(lane.busyObjects, object);
        }
        if (lane.queue.length > 0) {
          // Actions that queued meanwhile form the next group at once.
          this.run(orgId, lane);
        } else if (lane.running === 0 && !lane.timer) {
          this.lanes.delete(orgId);
          if (this.lanes.size === 0) this.idleWaiters.splice(0).forEach((w) => w());
        }
      });
  }
}
