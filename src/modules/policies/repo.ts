import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, type DbTime } from '../../db/values.js';
import type { Period, PolicyRule, PolicySet, PolicyUse, Ring, TargetType } from './gate.js';

/** Every SQL of spend policies: the `policies` and `policy_usage` tables, and the version. */

export interface PolicyRow {
  id: string;
  organization_id: string;
  name: string;
  target_type: TargetType;
  target_id: string | null;
  period: Period | null;
  spend_cap_wei: string | null;
  max_actions: number | null;
  allowed_actions: string[] | null;
  denied_actions: string[] | null;
  allowed_templates: string[] | null;
  denied_templates: string[] | null;
  max_fee_wei: string | null;
  created_at: Date;
  updated_at: Date;
}

type RawPolicy = Omit<PolicyRow, 'created_at' | 'updated_at'> & {
  created_at: DbTime;
  updated_at: DbTime;
};

type RawRing = {
  policy_id: string;
  buckets: (number | string)[];
  spent: (number | string)[];
  actions: number[];
};

const POLICY_COLUMNS = sql.raw(`id, organization_id, name, target_type, target_id, period,
  spend_cap_wei::text AS spend_cap_wei, max_actions, allowed_actions, denied_actions,
  allowed_templates, denied_templates, max_fee_wei::text AS max_fee_wei, created_at, updated_at`);

const rowOf = (r: RawPolicy): PolicyRow => ({
  ...r,
  created_at: asDate(r.created_at),
  updated_at: asDate(r.updated_at),
});

export const ruleOf = (r: PolicyRow | RawPolicy): PolicyRule => ({
  id: r.id,
  name: r.name,
  targetType: r.target_type,
  targetId: r.target_id,
  period: r.period,
  spendCapWei: r.spend_cap_wei === null ? null : BigInt(r.spend_cap_wei),
  maxActions: r.max_actions,
  allowedActions: r.allowed_actions,
  deniedActions: r.denied_actions,
  allowedTemplates: r.allowed_templates,
  deniedTemplates: r.denied_templates,
  maxFeeWei: r.max_fee_wei === null ? null : BigInt(r.max_fee_wei),
});

export const ringOf = (r: RawRing): Ring => ({
  buckets: r.buckets.map(Number),
  spent: r.spent.map((s) => BigInt(s)),
  actions: r.actions.map(Number),
});

const textArray = (xs: readonly string[] | null): SQL =>
  xs === null ? sql`NULL::text[]` : sql`${JSON.stringify(xs)}::jsonb`;

/** jsonb array → text[] in SQL (null stays null). */
const asTextArray = (xs: readonly string[] | null): SQL =>
  xs === null
    ? sql`NULL::text[]`
    : sql`ARRAY(SELECT jsonb_array_elements_text(${textArray(xs)}))::text[]`;

export interface PolicyValues {
  name: string;
  period: Period | null;
  spend_cap_wei: string | null;
  max_actions: number | null;
  allowed_actions: string[] | null;
  denied_actions: string[] | null;
  allowed_templates: string[] | null;
  denied_templates: string[] | null;
  max_fee_wei: string | null;
}

export async function countPolicies(tx: Executor, orgId: string): Promise<number> {
  const { rows } = await tx.execute<{ n: number | string }>(
    sql`SELECT count(*) AS n FROM policies WHERE organization_id = ${orgId}`,
  );
  return Number(rows[0]!.n);
}

export async function insertPolicy(
  tx: Executor,
  p: PolicyValues & {
    id: string;
    orgId: string;
    targetType: TargetType;
    targetId: string | null;
    byWallet: string;
    byKey: string | null;
    now: Date;
  },
): Promise<void> {
  await tx.execute(sql`INSERT INTO policies (id, organization_id, name, target_type, target_id,
      period, spend_cap_wei, max_actions, allowed_actions, denied_actions, allowed_templates,
      denied_templates, max_fee_wei, created_by_wallet_id, created_by_api_key_id, created_at,
      updated_at)
    VALUES (${p.id}, ${p.orgId}, ${p.name}, ${p.targetType}, ${p.targetId}, ${p.period},
      ${p.spend_cap_wei}::numeric, ${p.max_actions}, ${asTextArray(p.allowed_actions)},
      ${asTextArray(p.denied_actions)}, ${asTextArray(p.allowed_templates)},
      ${asTextArray(p.denied_templates)}, ${p.max_fee_wei}::numeric, ${p.byWallet}, ${p.byKey},
      ${p.now}, ${p.now})`);
  await tx.execute(sql`INSERT INTO policy_usage (policy_id, organization_id)
    VALUES (${p.id}, ${p.orgId})`);
}

/**
 * Replaces a policy's limits. Its use is kept when the window stays the same, and starts
 * afresh when the window changes (buckets of another size mean nothing).
 */
export async function updatePolicy(
  tx: Executor,
  orgId: string,
  id: string,
  p: PolicyValues,
  now: Date,
): Promise<void> {
  const { rows } = await tx.execute<{ period_changed: boolean }>(sql`
    UPDATE policies n SET name = ${p.name}, period = ${p.period},
      spend_cap_wei = ${p.spend_cap_wei}::numeric, max_actions = ${p.max_actions},
      allowed_actions = ${asTextArray(p.allowed_actions)},
      denied_actions = ${asTextArray(p.denied_actions)},
      allowed_templates = ${asTextArray(p.allowed_templates)},
      denied_templates = ${asTextArray(p.denied_templates)},
      max_fee_wei = ${p.max_fee_wei}::numeric, updated_at = ${now}
    FROM policies o
    WHERE n.id = o.id AND n.id = ${id} AND n.organization_id = ${orgId}
    RETURNING o.period IS DISTINCT FROM n.period AS period_changed`);
  if (rows[0]?.period_changed) {
    await tx.execute(sql`UPDATE policy_usage
      SET buckets = DEFAULT, spent = DEFAULT, actions = DEFAULT
      WHERE policy_id = ${id} AND organization_id = ${orgId}`);
  }
}

export async function deletePolicy(tx: Executor, orgId: string, id: string): Promise<boolean> {
  const { rows } = await tx.execute(
    sql`DELETE FROM policies WHERE id = ${id} AND organization_id = ${orgId} RETURNING id`,
  );
  return rows.length > 0;
}

export async function findPolicy(
  exec: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<PolicyRow | null> {
  const { rows } = await exec.execute<RawPolicy>(sql`SELECT ${POLICY_COLUMNS} FROM policies
    WHERE id = ${id} AND organization_id = ${orgId} ${lock ? sql`FOR UPDATE` : sql``}`);
  return rows[0] ? rowOf(rows[0]) : null;
}

export async function listPolicies(exec: Executor, orgId: string): Promise<PolicyRow[]> {
  const { rows } = await exec.execute<RawPolicy>(sql`SELECT ${POLICY_COLUMNS} FROM policies
    WHERE organization_id = ${orgId} ORDER BY id`);
  return rows.map(rowOf);
}

/** The use rings of an organization's policies (all of them; a ring is small). */
export async function readUsage(exec: Executor, orgId: string): Promise<Map<string, Ring>> {
  const { rows } =
    await exec.execute<RawRing>(sql`SELECT policy_id, buckets, spent::text[] AS spent,
    actions FROM policy_usage WHERE organization_id = ${orgId}`);
  return new Map(rows.map((r) => [r.policy_id, ringOf(r)]));
}

type RawSet = {
  id: string;
  version: number | string;
  use_seq: number | string;
  rules: RawPolicy[];
  usage: RawRing[];
};

const setOf = (r: RawSet): PolicySet => ({
  orgId: r.id,
  version: String(r.version),
  useSeq: String(r.use_seq),
  rules: r.rules.map(ruleOf),
  usage: new Map(r.usage.map((u) => [u.policy_id, ringOf(u)])),
});

const setSelect = (where: SQL) => sql`
  SELECT o.id, o.policy_version AS version, o.policy_use_seq AS use_seq,
    (SELECT coalesce(json_agg(p ORDER BY p.id), '[]') FROM (
      SELECT ${POLICY_COLUMNS} FROM policies WHERE organization_id = o.id) p) AS rules,
    (SELECT coalesce(json_agg(json_build_object('policy_id', u.policy_id,
        'buckets', u.buckets, 'spent', u.spent::text[], 'actions', u.actions)), '[]')
      FROM policy_usage u WHERE u.organization_id = o.id) AS usage
  FROM organizations o WHERE ${where}`;

/**
 * The policy sets of these organizations (unlocked: what the optimistic path remembers; the
 * group statement checks the version and the caps again). Missing organizations are left out.
 */
export async function readPolicySets(
  exec: Executor,
  orgIds: readonly string[],
): Promise<PolicySet[]> {
  const { rows } = await exec.execute<RawSet>(
    setSelect(sql`o.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(orgIds)}::jsonb))`),
  );
  return rows.map(setOf);
}

/**
 * Locks the organization's row (as the group statement's debit will, in the same
 * transaction) and answers its policy version and use sequence; null when it is missing.
 * Nothing about the organization's policies or their use can change while the lock is held.
 */
export async function lockVersion(
  tx: Executor,
  orgId: string,
): Promise<{ version: string; useSeq: string } | null> {
  const { rows } = await tx.execute<{ version: number | string; use_seq: number | string }>(sql`
    SELECT policy_version AS version, policy_use_seq AS use_seq FROM organizations
    WHERE id = ${orgId} FOR NO KEY UPDATE`);
  return rows[0] ? { version: String(rows[0].version), useSeq: String(rows[0].use_seq) } : null;
}

/** The policy set of one organization, read in a statement of its own (after `lockVersion`). */
export async function readPolicySet(tx: Executor, orgId: string): Promise<PolicySet | null> {
  const { rows } = await tx.execute<RawSet>(setSelect(sql`o.id = ${orgId}`));
  return rows[0] ? setOf(rows[0]) : null;
}

/**
 * The group statement's part (event bus, repo/group-write.ts): adds each policy's use to its
 * ring once the organization's balance row is locked (`debit`, a CTE answering `id` and the
 * `policy_use_seq` it has just moved), so the update reads the ring as the last committed
 * group left it, and answers per policy whether its caps still hold over the window (`ok`).
 * When the sequence is the one the checks expected (`seq`), no other writer came between
 * and the checks, made on exact use, stand; otherwise the window is summed again here. The
 * statement fails its guard unless every row is there and holds.
 */
export function policyUseCte(uses: readonly PolicyUse[], debit: SQL): SQL {
  return sql`
    UPDATE policy_usage u SET
      buckets[r.slot + 1] = r.bucket,
      spent[r.slot + 1] = CASE WHEN u.buckets[r.slot + 1] = r.bucket
        THEN u.spent[r.slot + 1] ELSE 0 END + r.spent::numeric,
      actions[r.slot + 1] = CASE WHEN u.buckets[r.slot + 1] = r.bucket
        THEN u.actions[r.slot + 1] ELSE 0 END + r.actions
    FROM jsonb_to_recordset(${JSON.stringify(uses)}::jsonb) AS r(org_id text, seq bigint,
      policy_id text, slot integer, bucket bigint, spent text, actions integer, cap_wei text,
      cap_actions integer)
    JOIN ${debit} d ON d.id = r.org_id
    WHERE u.policy_id = r.policy_id AND u.organization_id = r.org_id
    RETURNING CASE WHEN d.policy_use_seq = r.seq THEN true ELSE
      (r.cap_wei IS NULL OR (SELECT coalesce(sum(z.s), 0) FROM unnest(u.buckets, u.spent)
        AS z(b, s) WHERE z.b >= r.bucket - 60) <= r.cap_wei::numeric)
      AND (r.cap_actions IS NULL OR (SELECT coalesce(sum(z.n), 0) FROM unnest(u.buckets,
        u.actions) AS z(b, n) WHERE z.b >= r.bucket - 60) <= r.cap_actions) END AS ok`;
}
