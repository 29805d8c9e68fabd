import type { Db, Executor } from '../../db/pool.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import { PolicyGate, type PolicySet, type Ring } from './gate.js';
import { lockVersion, readPolicySet, readPolicySets, readUsage } from './repo.js';

/** How long a remembered policy set (and its use) is used before it is read again. */
const REMEMBER_MS = 30_000;

/**
 * What the event bus asks of spend policies (docs/policies.md), one call on each of its two
 * paths. The optimistic path (`recall`) checks a group against the set and use this process
 * remembers, one cached lookup per organization; nothing is trusted for a write: the group
 * statement guards the set's version (a change anywhere, in any process, moves it) and
 * re-checks every cap against the use rows it updates under the organization's row lock, in
 * the bucket of the database's clock. The locked path (`lock`) takes that row lock first,
 * then reads the use afresh with the database's time: every group of the organization, in
 * every process, updates the use only while holding the same lock, so what it reads is exact
 * until it commits, and its windows end where the statement's will.
 */
export class PolicyStates {
  private readonly sets = new TtlCache<string, PolicySet>(REMEMBER_MS, 10_000);

  constructor(private readonly db: Db) {}

  /** The remembered sets of these organizations, reading the missing ones in one query. */
  async recall(orgIds: readonly string[]): Promise<Map<string, PolicySet>> {
    const out = new Map<string, PolicySet>();
    const missing: string[] = [];
    for (const id of orgIds) {
      const s = this.sets.get(id);
      if (s) out.set(id, s);
      else missing.push(id);
    }
    if (missing.length > 0) {
      for (const s of await readPolicySets(this.db, missing)) {
        this.sets.set(s.orgId, s);
        out.set(s.orgId, s);
      }
    }
    return out;
  }

  /**
   * The locked path: locks the organization's row in `tx` and answers the checks of its
   * share (null: no such organization): its set with the use as committed, and windows that
   * end at the database's time, read in the same statement as the use (docs/policies.md,
   * "How the caps stay exact"). A remembered set of the same version keeps its rules; its
   * use is read again. `now` (the process's time) is only for a set with no policies, which
   * reads no use and whose checks never look at the time.
   */
  async lock(tx: Executor, orgId: string, now: Date): Promise<PolicyGate | null> {
    const version = await lockVersion(tx, orgId);
    if (version === null) return null;
    const known = this.sets.get(orgId);
    let read: { set: PolicySet; now: Date } | null;
    if (known && known.version === version) {
      const use =
        known.rules.length === 0
          ? { usage: new Map<string, Ring>(), now }
          : await readUsage(tx, orgId);
      read = { set: { ...known, usage: use.usage }, now: use.now };
    } else {
      read = await readPolicySet(tx, orgId);
    }
    if (!read) return null;
    this.sets.set(orgId, read.set);
    return new PolicyGate(read.set, read.now);
  }

  /** Forgets an organization's set (its policies changed in this process). */
  forget(orgId: string): void {
    this.sets.delete(orgId);
  }

  /**
   * The optimistic path's checks of one share of a group against a remembered `set`, its
   * windows ending at the process's time `now`: a prediction, which the group statement
   * checks on the database's clock.
   */
  gate(set: PolicySet, now: Date): PolicyGate {
    return new PolicyGate(set, now);
  }
}
