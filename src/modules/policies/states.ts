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
 * re-checks every cap against the use rows it updates under the organization's row lock. The
 * locked path (`lock`) takes that row lock first, then reads the use afresh: every group of
 * the organization, in every process, updates the use only while holding the same lock, so
 * what it reads is exact until it commits.
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
   * The locked path: locks the organization's row in `tx` and answers its set with the use
   * as committed (null: no such organization). A remembered set of the same version keeps
   * its rules; its use is read again.
   */
  async lock(tx: Executor, orgId: string): Promise<PolicySet | null> {
    const version = await lockVersion(tx, orgId);
    if (version === null) return null;
    const known = this.sets.get(orgId);
    let set: PolicySet | null;
    if (known && known.version === version) {
      set = {
        ...known,
        usage: known.rules.length === 0 ? new Map<string, Ring>() : await readUsage(tx, orgId),
      };
    } else {
      set = await readPolicySet(tx, orgId);
    }
    if (set) this.sets.set(orgId, set);
    return set;
  }

  /** Forgets an organization's set (its policies changed in this process). */
  forget(orgId: string): void {
    this.sets.delete(orgId);
  }

  /** The checks of one share of a group against `set`. */
  gate(set: PolicySet, now: Date): PolicyGate {
    return new PolicyGate(set, now);
  }
}
