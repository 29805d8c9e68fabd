import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, type DbTime } from '../../db/values.js';
import {
  addToRing,
  RING_SLOTS,
  type Period,
  type PolicyRule,
  type PolicySet,
  type PolicyUse,
  type Ring,
  type TargetType,
} from './gate.js';

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
  /** An owner, in person, set the current limits: only an owner changes or removes them. */
  set_by_owner: boolean;
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
  cur_bucket: number | string;
  cur_spent: number | string;
  cur_actions: number;
};

const POLICY_COLUMNS = sql.raw(`id, organization_id, name, target_type, target_id, period,
  spend_cap_wei::text AS spend_cap_wei, max_actions, allowed_actions, denied_actions,
  allowed_templates, denied_templates, max_fee_wei::text AS max_fee_wei, set_by_owner, created_at, updated_at`);

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

/** The ring of completed buckets with the current one put in its slot. */
export const ringOf = (r: RawRing): Ring => {
  const ring: Ring = {
    buckets: r.buckets.map(Number),
    spent: r.spent.map((s) => BigInt(s)),
    actions: r.actions.map(Number),
  };
  const cur = Number(r.cur_bucket);
  if (cur >= 0) addToRing(ring, cur, BigInt(r.cur_spent), Number(r.cur_actions));
  return ring;
};

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
    byOwner: boolean;
    now: Date;
  },
): Promise<void> {
  await tx.execute(sql`INSERT INTO policies (id, organization_id, name, target_type, target_id,
      period, spend_cap_wei, max_actions, allowed_actions, denied_actions, allowed_templates,
      denied_templates, max_fee_wei, created_by_wallet_id, created_by_api_key_id, set_by_owner,
      created_at, updated_at)
    VALUES (${p.id}, ${p.orgId}, ${p.name}, ${p.targetType}, ${p.targetId}, ${p.period},
      ${p.spend_cap_wei}::numeric, ${p.max_actions}, ${asTextArray(p.allowed_actions)},
      ${asTextArray(p.denied_actions)}, ${asTextArray(p.allowed_templates)},
      ${asTextArray(p.denied_templates)}, ${p.max_fee_wei}::numeric, ${p.byWallet}, ${p.byKey},
      ${p.byOwner}, ${p.now}, ${p.now})`);
  await tx.execute(sql`INSERT INTO policy_usage (policy_id, organization_id)
    VALUES (${p.id}, ${p.orgId})`);
}

/**
 * Replaces a policy's limits. Its use is kept when the window stays the same, and starts
 * afresh when the window changes (buckets of another size mean nothing). `byOwner`: an owner
 * set them, and only an owner may change them from now on.
 */
export async function updatePolicy(
  tx: Executor,
  orgId: string,
  id: string,
  p: PolicyValues & { byOwner: boolean },
  now: Date,
): Promise<void> {
  const { rows } = await tx.execute<{ period_changed: boolean }>(sql`
    UPDATE policies n SET name = ${p.name}, period = ${p.period},
      spend_cap_wei = ${p.spend_cap_wei}::numeric, max_actions = ${p.max_actions},
      allowed_actions = ${asTextArray(p.allowed_actions)},
      denied_actions = ${asTextArray(p.denied_actions)},
      allowed_templates = ${asTextArray(p.allowed_templates)},
      denied_templates = ${asTextArray(p.denied_templates)},
      max_fee_wei = ${p.max_fee_wei}::numeric, set_by_owner = ${p.byOwner},
      updated_at = ${now}
    FROM policies o
    WHERE n.id = o.id AND n.id = ${id} AND n.organization_id = ${orgId}
    RETURNING o.period IS DISTINCT FROM n.period AS period_changed`);
  if (rows[0]?.period_changed) {
    await tx.execute(sql`UPDATE policy_usage
      SET buckets = DEFAULT, spent = DEFAULT, actions = DEFAULT, cur_bucket = DEFAULT,
        cur_spent = DEFAULT, cur_actions = DEFAULT, hist_spent = DEFAULT, hist_actions = DEFAULT
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

/**
 * The database's time in whole milliseconds since the epoch: where the windows of spend
 * policies end (docs/policies.md, "How the caps stay exact"). `clock_timestamp()`, the time
 * when it is evaluated, not when its statement or transaction began: each use of it here
 * comes after the organization's row lock is held, which the statement may have waited for.
 * One clock for every process, so their clocks need not agree.
 */
const DB_NOW_MS = sql.raw('floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint');

/** A policy's use row as JSON (the fields of `RawRing`). */
const USE_JSON = sql.raw(`json_build_object('policy_id', u.policy_id,
        'buckets', u.buckets, 'spent', u.spent::text[], 'actions', u.actions,
        'cur_bucket', u.cur_bucket, 'cur_spent', u.cur_spent::text,
        'cur_actions', u.cur_actions)`);

/** Use rings read with the database's time, where the windows end for the checks on them. */
export interface UseRead {
  usage: Map<string, Ring>;
  now: Date;
}

/**
 * The use rings of an organization's policies (all of them; a ring is small), with the
 * database's time as the statement reads them, where the windows end. The locked path reads
 * them under the organization's row lock: every group that wrote them took its bucket before
 * that time, and every later group takes its bucket after it.
 */
export async function readUsage(exec: Executor, orgId: string): Promise<UseRead> {
  const { rows } = await exec.execute<{ now_ms: number | string; usage: RawRing[] }>(sql`
    SELECT ${DB_NOW_MS} AS now_ms,
      (SELECT coalesce(json_agg(${USE_JSON}), '[]')
        FROM policy_usage u WHERE u.organization_id = ${orgId}) AS usage`);
  const r = rows[0]!;
  return {
    usage: new Map(r.usage.map((u) => [u.policy_id, ringOf(u)])),
    now: new Date(Number(r.now_ms)),
  };
}

type RawSet = {
  id: string;
  version: number | string;
  rules: RawPolicy[];
  usage: RawRing[];
};

const setOf = (r: RawSet): PolicySet => ({
  orgId: r.id,
  version: String(r.version),
  rules: r.rules.map(ruleOf),
  usage: new Map(r.usage.map((u) => [u.policy_id, ringOf(u)])),
});

/** `now`: with the database's time (`now_ms`), for a read under the organization's row lock. */
const setSelect = (where: SQL, now = false) => {
  const nowColumn = now ? sql`, ${DB_NOW_MS} AS now_ms` : sql``;
  return sql`
  SELECT o.id, o.policy_version AS version,
    (SELECT coalesce(json_agg(p ORDER BY p.id), '[]') FROM (
      SELECT ${POLICY_COLUMNS} FROM policies WHERE organization_id = o.id) p) AS rules,
    (SELECT coalesce(json_agg(${USE_JSON}), '[]')
      FROM policy_usage u WHERE u.organization_id = o.id) AS usage${nowColumn}
  FROM organizations o WHERE ${where}`;
};

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
 * transaction) and answers its policy version; null when it is missing. Nothing about the
 * organization's policies or their use can change while the lock is held.
 */
export async function lockVersion(tx: Executor, orgId: string): Promise<string | null> {
  const { rows } = await tx.execute<{ version: number | string }>(sql`
    SELECT policy_version AS version FROM organizations WHERE id = ${orgId} FOR NO KEY UPDATE`);
  return rows[0] ? String(rows[0].version) : null;
}

/**
 * The policy set of one organization, read in a statement of its own (after `lockVersion`),
 * with the database's time as it reads the use (`readUsage`).
 */
export async function readPolicySet(
  tx: Executor,
  orgId: string,
): Promise<{ set: PolicySet; now: Date } | null> {
  const { rows } = await tx.execute<RawSet & { now_ms: number | string }>(
    setSelect(sql`o.id = ${orgId}`, true),
  );
  const r = rows[0];
  return r ? { set: setOf(r), now: new Date(Number(r.now_ms)) } : null;
}

/** `policyUseCte`'s SET: `u` the row as the last group left it, `r` this group's use. */
const USE_SET = (() => {
  const slot = `(u.cur_bucket % ${RING_SLOTS})::integer + 1`;
  const same = 'u.cur_bucket >= r.bucket';
  const rolls = 'u.cur_bucket >= 0 AND u.cur_bucket < r.bucket';
  // The ring's use within the window ending at r.bucket, the current bucket included.
  const hist = (col: string, cur: string) => `(SELECT coalesce(sum(z.v), 0)
      FROM unnest(u.buckets, u.${col}) AS z(b, v) WHERE z.b >= r.bucket - ${RING_SLOTS - 1})
    + CASE WHEN u.cur_bucket >= r.bucket - ${RING_SLOTS - 1} THEN u.${cur} ELSE 0 END`;
  // The current bucket into its slot (added to what is there only if it is the same bucket).
  const ring = (col: string, value: string) =>
    `${col} = CASE WHEN ${rolls} THEN ons_array_set(u.${col}, ${slot}, ${value}) ELSE u.${col} END`;
  const merged = (col: string, cur: string) =>
    `CASE WHEN u.buckets[${slot}] = u.cur_bucket THEN u.${col}[${slot}] ELSE 0 END + u.${cur}`;
  return sql.raw(`
      cur_bucket = GREATEST(u.cur_bucket, r.bucket),
      cur_spent = CASE WHEN ${same} THEN u.cur_spent ELSE 0 END + r.spent::numeric,
      cur_actions = CASE WHEN ${same} THEN u.cur_actions ELSE 0 END + r.actions,
      hist_spent = CASE WHEN ${same} THEN u.hist_spent ELSE ${hist('spent', 'cur_spent')} END,
      hist_actions = CASE WHEN ${same} THEN u.hist_actions
        ELSE ${hist('actions', 'cur_actions')} END,
      ${ring('buckets', 'u.cur_bucket')},
      ${ring('spent', merged('spent', 'cur_spent'))},
      ${ring('actions', merged('actions', 'cur_actions'))}`);
})();

/** `policyUseCte`'s answer per row: the caps hold over the window as the row is now. */
const USE_OK = sql.raw(`(r.cap_wei IS NULL OR u.cur_spent + u.hist_spent <= r.cap_wei::numeric)
      AND (r.cap_actions IS NULL OR u.cur_actions + u.hist_actions <= r.cap_actions) AS ok`);

/**
 * The group statement's part (event bus, repo/group-write.ts): adds each policy's use to its
 * row once the organization's balance row is locked (`debit`, a CTE answering `id`), and
 * answers per policy whether its caps hold over the window (`ok`); the statement fails its
 * guard unless every row is there and holds. Every group of the organization, in every
 * process, writes these rows only under that lock, so the update starts from the row as the
 * last committed group left it (PostgreSQL re-reads a row changed since the statement's
 * snapshot before it updates it), and `cur + hist` is the exact use of the window.
 *
 * The bucket is the database's: `nowMs` (the database's clock, `DB_NOW_MS`) divided by the
 * policy's bucket width, evaluated per row joined with its organization's debit row, so
 * after the lock is held, whatever the statement waited for it. Every earlier group of the
 * organization took its bucket before this one got the lock, so the bucket is the row's
 * current one or later: a later one rolls over (the current bucket moves into the ring, and
 * `hist` becomes the ring's use within the new window; the sum over the ring is only made
 * here, once per bucket). An earlier one (the database's clock set back) adds to the current
 * one: it counts a little later than it happened, never less than the true use in any
 * window. `nowMs` is for test/policies/use-rows.test.ts, which writes chosen buckets.
 *
 * No use (an organization without capping policies): the statement as it has always been
 * sent, an update of no rows, so its text (the name it is prepared under) stays the same.
 */
export function policyUseCte(uses: readonly PolicyUse[], debit: SQL, nowMs: SQL = DB_NOW_MS): SQL {
  if (uses.length === 0) {
    return sql`
    UPDATE policy_usage u SET ${USE_SET}
    FROM jsonb_to_recordset(${JSON.stringify(uses)}::jsonb) AS r(org_id text, policy_id text,
      bucket bigint, spent text, actions integer, cap_wei text, cap_actions integer)
    JOIN ${debit} d ON d.id = r.org_id
    WHERE u.policy_id = r.policy_id AND u.organization_id = r.org_id
    RETURNING ${USE_OK}`;
  }
  // A subquery with a volatile function in its output is not merged into the update: the
  // time is taken on the row it joins with the locked debit row.
  return sql`
    UPDATE policy_usage u SET ${USE_SET}
    FROM (SELECT x.org_id, x.policy_id, x.spent, x.actions, x.cap_wei, x.cap_actions,
        ${nowMs} / x.bucket_ms AS bucket
      FROM jsonb_to_recordset(${JSON.stringify(uses)}::jsonb) AS x(org_id text, policy_id text,
        bucket_ms bigint, spent text, actions integer, cap_wei text, cap_actions integer)
      JOIN ${debit} d ON d.id = x.org_id) AS r
    WHERE u.policy_id = r.policy_id AND u.organization_id = r.org_id
    RETURNING ${USE_OK}`;
}
