import { tracing, type TraceContext } from '../../lib/tracing.js';
import type { GroupApplier } from './apply-group.js';
import { isMint, objectIdOf } from './group-items.js';
import type { ApplyOutcome, VerifiedAction } from './types.js';

export interface GroupCommitOptions {
  /** How long the first action of a group waits for company (ms). */
  maxWaitMs: number;
  /** Most actions applied in one transaction. */
  maxGroup: number;
  /** Most groups in flight at once, stalled groups not counted. */
  maxConcurrent: number;
  /**
   * A group still in flight after this long (ms) is stalled (waiting for a row lock that
   * something else holds, most likely) and stops counting towards `maxConcurrent`, so other
   * organizations' actions need not wait for it. 0: never.
   */
  stallMs: number;
  /** Most stalled groups at once; beyond them a stalled group counts again. */
  maxStalled: number;
}

/**
 * What applies one group (actions of any organizations) atomically, one outcome per item, in
 * order: apply-group.ts's `GroupApplier`.
 */
export type ApplyGroup = Pick<GroupApplier, 'apply'>;

interface Entry {
  item: VerifiedAction;
  /** performance.now() when it was queued. */
  at: number;
  resolve: (o: ApplyOutcome) => void;
  reject: (err: unknown) => void;
  /** The submitter's trace context, when tracing is on (src/lib/tracing.ts). */
  ctx: TraceContext | null;
}

/** A group in flight: whether it has stalled, and its stall timer while one is armed. */
interface Flight {
  stalled: boolean;
  timer: NodeJS.Timeout | null;
}

/** The object an action touches (a mint makes a new one, so none). */
const objectOf = (item: VerifiedAction): string | null => (isMint(item) ? null : objectIdOf(item));

function add(m: Map<string, number>, key: string) {
  m.set(key, (m.get(key) ?? 0) + 1);
}

function remove(m: Map<string, number>, key: string) {
  const n = (m.get(key) ?? 0) - 1;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}

/**
 * Group commit (docs/ebus.md, "Inside"). Verified actions queue and are applied in groups, one
 * statement each, so the round trips, the statement's fixed cost and the disk flush are paid
 * once per group instead of once per action. A group takes every action that is ready, of
 * whichever organizations: ten organizations sending five actions at a time make one group
 * of fifty, not ten of five (apply-group.ts plans each organization's share on its own and
 * writes them together).
 *
 * Up to `maxConcurrent` groups run at once, and beyond them up to `maxStalled` groups that have
 * been in flight for more than `stallMs`: a group that waits for a row lock held by another
 * transaction (a template's visibility switch, an operator's long transaction) must not hold
 * back every other organization's actions until the lock is released (docs/decisions.md,
 * "A stalled group no longer holds the others back"). Its own organization's actions, and
 * those of its wallets and objects, still wait for it.
 *
 * Groups in flight never share a wallet, an object or a paying organization: an action whose
 * wallet, object or organization is busy waits for the next group, and so does every later
 * action of that wallet or object, so each wallet's
 * nonces and each object's history still apply in arrival order. So concurrent groups never
 * meet at an organization's balance row, which each statement locks last: a second group of
 * one organization would wait there for the first to commit anyway, and then re-check the
 * row it waited for, which in PostgreSQL means starting every part of its statement again
 * (docs/decisions.md, "One group in flight per organization"). Its actions wait in the queue
 * instead and join the next group, which is larger for it.
 */
export class GroupCommitter {
  private queue: Entry[] = [];
  private running = 0;
  /** Groups in flight that outlasted `stallMs` and no longer count towards `maxConcurrent`. */
  private stalled = 0;
  /** Wallets, objects and paying organizations that a group in flight touches. */
  private readonly busyWallets = new Map<string, number>();
  private readonly busyObjects = new Map<string, number>();
  private readonly busyOrgs = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly idleWaiters: (() => void)[] = [];
  /**
   * For metrics and the benchmark: groups applied, actions in them, the summed time actions
   * waited in the queue and the summed time groups took to apply (ms).
   */
  readonly stats = { groups: 0, actions: 0, waitMs: 0, applyMs: 0, stalled: 0 };

  /** For metrics: actions waiting for a group, and groups being applied, now. */
  get depth(): { queued: number; running: number } {
    return { queued: this.queue.length, running: this.running };
  }

  constructor(
    private readonly applier: ApplyGroup,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Queues a verified action; resolves when its group has committed (or refused it). */
  submit(item: VerifiedAction): Promise<ApplyOutcome> {
    return new Promise<ApplyOutcome>((resolve, reject) => {
      const ctx = tracing()?.current() ?? null;
      this.queue.push({ item, at: performance.now(), resolve, reject, ctx });
      this.schedule();
    });
  }

  /** Resolves once every queued action has been applied (used on shutdown). */
  drain(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private idle(): boolean {
    return this.queue.length === 0 && this.running === 0 && !this.timer;
  }

  /** Whether another group may start now. */
  private room(): boolean {
    return this.running - this.stalled < this.options.maxConcurrent;
  }

  private schedule(): void {
    if (!this.room()) return; // a completion (or a stall) starts the next
    if (this.queue.length >= this.options.maxGroup || this.options.maxWaitMs <= 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      if (this.options.maxWaitMs <= 0) setImmediate(() => this.run());
      else this.run();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.run();
    }, this.options.maxWaitMs);
  }

  /**
   * Takes the next group: queued actions whose wallet, object and paying organization no
   * running group has.
   */
  private take(): Entry[] {
    const group: Entry[] = [];
    const rest: Entry[] = [];
    const blockedWallets = new Set<string>();
    const blockedObjects = new Set<string>();
    for (const e of this.queue) {
      const wallet = e.item.walletId;
      const object = objectOf(e.item);
      const blocked =
        group.length >= this.options.maxGroup ||
        this.busyOrgs.has(e.item.payerOrgId) ||
        this.busyWallets.has(wallet) ||
        blockedWallets.has(wallet) ||
        (object !== null && (this.busyObjects.has(object) || blockedObjects.has(object)));
      if (blocked) {
        // Everything after a held action of the same wallet or object waits with it.
        blockedWallets.add(wallet);
        if (object !== null) blockedObjects.add(object);
        rest.push(e);
      } else {
        group.push(e);
      }
    }
    this.queue = rest;
    return group;
  }

  private run(): void {
    while (this.room() && this.queue.length > 0) {
      const group = this.take();
      if (group.length === 0) break; // everything queued waits for a running group
      this.start(group);
    }
    if (this.idle()) this.idleWaiters.splice(0).forEach((w) => w());
  }

  private start(group: Entry[]): void {
    this.running++;
    const started = performance.now();
    for (const e of group) this.stats.waitMs += started - e.at;
    for (const e of group) {
      add(this.busyOrgs, e.item.payerOrgId);
      add(this.busyWallets, e.item.walletId);
      const object = objectOf(e.item);
      if (object !== null) add(this.busyObjects, object);
    }
    const items = group.map((e) => e.item);
    const flight: Flight = { stalled: false, timer: null };
    this.watch(flight);
    const t = tracing();
    const applying = t
      ? t.group(
          group.map((e) => ({ hash: e.item.hash, ctx: e.ctx })),
          () => this.applier.apply(items),
        )
      : this.applier.apply(items);
    void applying
      .then(
        (outcomes) => {
          this.stats.groups++;
          this.stats.actions += group.length;
          this.stats.applyMs += performance.now() - started;
          group.forEach((e, i) => e.resolve(outcomes[i]!));
        },
        (err: unknown) => group.forEach((e) => e.reject(err)),
      )
      .finally(() => {
        if (flight.timer) clearTimeout(flight.timer);
        this.running--;
        if (flight.stalled) this.stalled--;
        for (const e of group) {
          remove(this.busyOrgs, e.item.payerOrgId);
          remove(this.busyWallets, e.item.walletId);
          const object = objectOf(e.item);
          if (object !== null) remove(this.busyObjects, object);
        }
        // Actions that queued meanwhile form the next group at once.
        this.run();
      });
  }

  /**
   * Arms the stall timer of a group that just started. When it fires with a stalled slot
   * free, the group stops counting towards `maxConcurrent` and queued actions may start a
   * group; with every stalled slot taken, it looks again after another `stallMs`.
   */
  private watch(flight: Flight): void {
    const { stallMs, maxStalled } = this.options;
    if (stallMs <= 0 || maxStalled <= 0) return;
    const check = () => {
      if (this.stalled >= maxStalled) {
        flight.timer = setTimeout(check, stallMs);
        return;
      }
      flight.timer = null;
      flight.stalled = true;
      this.stalled++;
      this.stats.stalled++;
      this.run();
    };
    flight.timer = setTimeout(check, stallMs);
  }
}
