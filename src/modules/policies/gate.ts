import { AppError, Code } from '../../lib/errors.js';

/**
 * Spend policies as the event bus's plan checks them (docs/policies.md). Pure: no I/O. The
 * policy set and its use come from `PolicyStates` (states.ts), read under the organization's
 * balance-row lock on the locked path or remembered on the optimistic path, where the group
 * statement re-checks every cap against the rows it has just updated (repo/group-write.ts in
 * the event bus, `policyUseCte` here) and against the set's version. Windows end at the
 * database's time: the statement takes its bucket from PostgreSQL's clock, and the locked
 * path's checks from the time read with the use; only the optimistic path's prediction uses
 * the process's clock, and the statement decides.
 */

export const PERIODS = ['minute', 'hour', 'day', '30d'] as const;
export type Period = (typeof PERIODS)[number];

export const PERIOD_MS: Record<Period, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  '30d': 30 * 86_400_000,
};

/** Buckets per window; the ring keeps one more, so a whole window plus the current bucket. */
export const BUCKETS_PER_WINDOW = 60;
export const RING_SLOTS = BUCKETS_PER_WINDOW + 1;

export const TARGET_TYPES = ['organization', 'wallet', 'api_key', 'template'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/** One policy as the checks read it. */
export interface PolicyRule {
  id: string;
  name: string;
  targetType: TargetType;
  targetId: string | null;
  period: Period | null;
  spendCapWei: bigint | null;
  maxActions: number | null;
  allowedActions: readonly string[] | null;
  deniedActions: readonly string[] | null;
  allowedTemplates: readonly string[] | null;
  deniedTemplates: readonly string[] | null;
  maxFeeWei: bigint | null;
}

/** A policy's use: the ring of buckets (bucket index, wei spent, actions) by slot. */
export interface Ring {
  buckets: number[];
  spent: bigint[];
  actions: number[];
}

/** An organization's policy set at one version, with the use of those that cap. */
export interface PolicySet {
  orgId: string;
  version: string;
  rules: readonly PolicyRule[];
  usage: Map<string, Ring>;
}

export const emptyRing = (): Ring => ({
  buckets: new Array<number>(RING_SLOTS).fill(-1),
  spent: new Array<bigint>(RING_SLOTS).fill(0n),
  actions: new Array<number>(RING_SLOTS).fill(0),
});

export const bucketMs = (p: Period): number => PERIOD_MS[p] / BUCKETS_PER_WINDOW;
export const bucketOf = (p: Period, at: Date): number => Math.floor(at.getTime() / bucketMs(p));
export const slotOf = (bucket: number): number => bucket % RING_SLOTS;

/**
 * The use within the window ending in `bucket`: every bucket that overlaps it, so never less
 * than the use over the exact rolling window (the oldest bucket may count a little more).
 */
export function windowUse(ring: Ring, bucket: number): { spent: bigint; actions: number } {
  let spent = 0n;
  let actions = 0;
  const from = bucket - BUCKETS_PER_WINDOW;
  for (let i = 0; i < RING_SLOTS; i++) {
    if (ring.buckets[i]! >= from) {
      spent += ring.spent[i]!;
      actions += ring.actions[i]!;
    }
  }
  return { spent, actions };
}

/** Adds one bucket's use to a ring (as the group statement does to the row). */
export function addToRing(ring: Ring, bucket: number, spent: bigint, actions: number): void {
  const s = slotOf(bucket);
  if (ring.buckets[s] !== bucket) {
    ring.buckets[s] = bucket;
    ring.spent[s] = 0n;
    ring.actions[s] = 0;
  }
  ring.spent[s] = ring.spent[s]! + spent;
  ring.actions[s] = ring.actions[s]! + actions;
}

export const capsUse = (r: PolicyRule): boolean =>
  r.period !== null && (r.spendCapWei !== null || r.maxActions !== null);

/** What the checks need of one action. */
export interface GatedAction {
  name: string;
  walletId: string;
  apiKeyId: string | null;
  /** The template of the mint, or of the object acted on (null: none). */
  templateId: string | null;
}

/**
 * One policy's use a group adds (the group statement's `policy_use` rows). No bucket: the
 * statement takes it from the database's clock once it holds the organization's row lock.
 */
export interface PolicyUse {
  org_id: string;
  policy_id: string;
  /** The width of one of the policy's buckets (`bucketMs` of its period). */
  bucket_ms: number;
  spent: string;
  actions: number;
  cap_wei: string | null;
  cap_actions: number | null;
}

/** What a share's plan hands to the group statement. */
export interface PolicyCharge {
  /** The policy set's version the checks used (the debit's guard). */
  version: string;
  uses: PolicyUse[];
}

export type PolicyLimit =
  | 'allowed_actions'
  | 'denied_actions'
  | 'allowed_templates'
  | 'denied_templates'
  | 'max_fee_wei'
  | 'spend_cap_wei'
  | 'max_actions';

/** 403 code 7 naming the policy and the limit (`details`); the action costs nothing. */
export function policyRefusal(
  rule: PolicyRule,
  limit: PolicyLimit,
  info: { limit_value: unknown; used?: string; requested?: string },
): AppError {
  const window = rule.period ? ` per ${rule.period}` : '';
  const what: Record<PolicyLimit, string> = {
    allowed_actions: 'the action is not among its allowed actions',
    denied_actions: 'the action is among its denied actions',
    allowed_templates: 'the template is not among its allowed templates',
    denied_templates: 'the template is among its denied templates',
    max_fee_wei: `the fee is above its largest single fee of ${String(info.limit_value)} wei`,
    spend_cap_wei: `its spend cap of ${String(info.limit_value)} wei${window} is reached`,
    max_actions: `its cap of ${String(info.limit_value)} actions${window} is reached`,
  };
  return new AppError(
    Code.PERMISSION_DENIED,
    `refused by policy ${rule.id} (${rule.name}): ${what[limit]}`,
    {
      policy_id: rule.id,
      policy_name: rule.name,
      limit,
      ...info,
      ...(rule.period && (limit === 'spend_cap_wei' || limit === 'max_actions')
        ? { period: rule.period }
        : {}),
    },
  );
}

const applies = (r: PolicyRule, a: GatedAction): boolean => {
  switch (r.targetType) {
    case 'organization':
      return true;
    case 'wallet':
      return r.targetId === a.walletId;
    case 'api_key':
      return r.targetId === a.apiKeyId;
    case 'template':
      return a.templateId !== null && r.targetId === a.templateId;
  }
};

/**
 * The checks of one share of a group (one organization), in plan order: each admitted
 * action's use is seen by the next. `admit` answers the refusal, or null and records the
 * use; `charge` answers what the group statement writes and re-checks.
 */
export class PolicyGate {
  private readonly pending = new Map<string, { spent: bigint; actions: number }>();
  private readonly baseUse = new Map<string, { spent: bigint; actions: number }>();

  constructor(
    private readonly set: PolicySet,
    /**
     * Where the windows end: on the locked path the database's time, read with the use under
     * the organization's row lock; on the optimistic path the process's (only a prediction:
     * the group statement checks on the database's clock).
     */
    private readonly now: Date,
  ) {}

  /** The set the checks read, and add the use they charge to. */
  get policySet(): PolicySet {
    return this.set;
  }

  get empty(): boolean {
    return this.set.rules.length === 0;
  }

  private used(rule: PolicyRule): { spent: bigint; actions: number } {
    let u = this.baseUse.get(rule.id);
    if (!u) {
      const ring = this.set.usage.get(rule.id) ?? emptyRing();
      u = windowUse(ring, bucketOf(rule.period!, this.now));
      this.baseUse.set(rule.id, u);
    }
    const p = this.pending.get(rule.id);
    return p ? { spent: u.spent + p.spent, actions: u.actions + p.actions } : u;
  }

  admit(a: GatedAction, feeWei: bigint): AppError | null {
    const rules = this.set.rules;
    if (rules.length === 0) return null;
    const capped: PolicyRule[] = [];
    for (const r of rules) {
      if (!applies(r, a)) continue;
      if (r.allowedActions && !r.allowedActions.includes(a.name)) {
        return policyRefusal(r, 'allowed_actions', { limit_value: r.allowedActions });
      }
      if (r.deniedActions?.includes(a.name)) {
        return policyRefusal(r, 'denied_actions', { limit_value: r.deniedActions });
      }
      if (
        r.allowedTemplates &&
        (a.templateId === null || !r.allowedTemplates.includes(a.templateId))
      ) {
        return policyRefusal(r, 'allowed_templates', { limit_value: r.allowedTemplates });
      }
      if (a.templateId !== null && r.deniedTemplates?.includes(a.templateId)) {
        return policyRefusal(r, 'denied_templates', { limit_value: r.deniedTemplates });
      }
      if (r.maxFeeWei !== null && feeWei > r.maxFeeWei) {
        return policyRefusal(r, 'max_fee_wei', {
          limit_value: r.maxFeeWei.toString(),
          requested: feeWei.toString(),
        });
      }
      if (!capsUse(r)) continue;
      const u = this.used(r);
      if (r.spendCapWei !== null && u.spent + feeWei > r.spendCapWei) {
        return policyRefusal(r, 'spend_cap_wei', {
          limit_value: r.spendCapWei.toString(),
          used: u.spent.toString(),
          requested: feeWei.toString(),
        });
      }
      if (r.maxActions !== null && u.actions + 1 > r.maxActions) {
        return policyRefusal(r, 'max_actions', {
          limit_value: r.maxActions,
          used: String(u.actions),
          requested: '1',
        });
      }
      capped.push(r);
    }
    for (const r of capped) {
      const p = this.pending.get(r.id) ?? { spent: 0n, actions: 0 };
      p.spent += feeWei;
      p.actions += 1;
      this.pending.set(r.id, p);
    }
    return null;
  }

  /**
   * What the group statement writes: each capping policy's added use, with its caps to
   * re-check against the row as it is then, in the bucket of the database's clock. Also adds
   * the use to the remembered rings, in the bucket of this gate's time, so the next group of
   * this process sees it (a group that does not commit, or a bucket the database's clock put
   * elsewhere, leaves them predicting wrong, which at worst sends a group to the locked path,
   * which reads them afresh).
   */
  charge(): PolicyCharge {
    const uses: PolicyUse[] = [];
    for (const r of this.set.rules) {
      const p = this.pending.get(r.id);
      if (!p) continue;
      const bucket = bucketOf(r.period!, this.now);
      let ring = this.set.usage.get(r.id);
      if (!ring) {
        ring = emptyRing();
        this.set.usage.set(r.id, ring);
      }
      addToRing(ring, bucket, p.spent, p.actions);
      uses.push({
        org_id: this.set.orgId,
        policy_id: r.id,
        bucket_ms: bucketMs(r.period!),
        spent: p.spent.toString(),
        actions: p.actions,
        cap_wei: r.spendCapWei?.toString() ?? null,
        cap_actions: r.maxActions,
      });
    }
    return { version: this.set.version, uses };
  }
}
