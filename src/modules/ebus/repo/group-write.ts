import { sql, type SQL } from 'drizzle-orm';
import type { RowRunner } from '../../../db/prepared.js';
import {
  insertObjects,
  updateObjects,
  type ObjectState,
  type TemplateInfo,
} from '../../objects/index.js';
import { policyUseCte, type PolicyCharge } from '../../policies/index.js';
import { debitFees } from '../../organizations/index.js';
import { insertFeeLedgerRows } from '../../balance/index.js';
import { advanceNonces, raiseSignCounts } from '../../wallets/index.js';
import type { ActionLogRecord } from '../types.js';

/**
 * The writes of one group (docs/ebus.md, "Inside") as ONE statement: new and changed objects,
 * action log rows, wallet nonces, passkey sign counts, the hooks' rows (batches, webhooks), the
 * debit of the organization's balance and the ledger rows. Every write that depends on state
 * read earlier is guarded by it (a wallet's nonce, an object's version, a template's
 * content, a balance that covers the fees, the signing credentials not removed: a removal
 * reaches every process at once, whatever they remember) and `ons_group_guard` (migrations
 * 0010, 0013) aborts the whole statement when a guard did not hold, so the group commits
 * completely or not at all: the locked path reads under row locks and its guards always
 * hold; the optimistic path reads from caches and falls back to the locked path when one
 * does not.
 */

export interface GroupWrite {
  newObjects: ObjectState[];
  /** Changed objects, each with the version it had when read (the guard). */
  changedObjects: (ObjectState & { expected_version: number })[];
  logs: (ActionLogRecord & {
    organization_id: string;
    wallet_id: string;
    prev_integrity_hash: string;
    integrity_hash: string;
  })[];
  nonces: { id: string; expected: number; next_nonce: number }[];
  signCounts: { id: string; sign_count: number }[];
  /** The credentials that signed (each once); all must still be live and their wallet's. */
  credentials: { wallet_id: string; type: string; external_id: string }[];
}

/** What one organization pays for its share of a group. */
export interface GroupCharge {
  orgId: string;
  totalFeeWei: bigint;
  /** One row per applied action, in order; `after_offset_wei` is what later rows still debit. */
  ledger: { id: string; amount_wei: string; after_offset_wei: string; ref_id: string }[];
  /** Its spend policies' version and added use (docs/policies.md); none: not checked. */
  policy?: PolicyCharge;
}

/**
 * A data-modifying statement with a RETURNING clause that a hook adds (hooks.ts); in the
 * object form, the rows it returned are handed to `committed` once the group has committed.
 */
export type HookStatement = SQL | CollectedStatement | GuardStatement;

/**
 * A condition the statement must find true, or it aborts like any other guard (ONS01): what
 * a hook left out on the strength of what it remembers must still be so (hooks.ts).
 */
export interface GuardStatement {
  guard: SQL;
}

export interface CollectedStatement {
  collect: SQL;
  /**
   * How its rows are read back, given the CTE that holds them (`h`): a query answering one
   * JSON array, which may join what the rows name as the statement sees it. Without it, the
   * RETURNING rows as they are.
   */
  readBack?: (rows: SQL) => SQL;
  /** The statement's rows as read back (JSON), called after the commit, never before. */
  committed(rows: unknown[]): void;
}

type WritingStatement = SQL | CollectedStatement;
const isGuard = (h: HookStatement): h is GuardStatement => 'guard' in h;
const statementOf = (h: WritingStatement): SQL => ('collect' in h ? h.collect : h);

/**
 * The batch a group's actions join (hooks.ts): a SELECT evaluated once per group
 * statement, answering at most one row `(id text, seq_end bigint, next_id text, next_end
 * bigint)` — the building batch and the first execution-order number beyond it, and the
 * batch named to follow it with the end of its numbers. An action numbered before `seq_end`
 * joins the building batch, one numbered before `next_end` the next; any other (or all of
 * them when it answers no row) is logged without a batch.
 */
export type BatchJoin = SQL;

/** What the group statement answers. */
export interface GroupResult {
  /** What each paying organization holds after its debit. */
  balances: Map<string, bigint>;
  /** The batch the group's actions joined (null: none open). */
  batchId: string | null;
  /**
   * Actions numbered past that batch's end: the next batch's id, or null for those logged
   * without a batch (they join one when it opens).
   */
  overflow: Map<string, string | null>;
  /** Hands the collected hook statements' rows on: call it once the group has committed. */
  afterCommit: () => void;
}

/** A guard of the group statement did not hold: nothing was written. */
export class GroupGuardFailed extends Error {
  constructor(
    message: string,
    /** The balance did not cover the fees (the rest held). */
    readonly balanceShort: boolean,
  ) {
    super(message);
  }
}

const LOG_FIELDS = sql.raw(`id, organization_id, hash, name, wallet_id, wallet, signature_type,
  signature, nonce, params, expires, object_id, template_id, template_version, fee_wei,
  prev_integrity_hash, integrity_hash, when_created`);

const json = (v: unknown): SQL => sql`${JSON.stringify(v)}::jsonb`;

/**
 * What the template guard compares of a template the checks read (docs/ebus.md, "Inside"):
 * `version`, which migration 0020's trigger moves whenever name, description, category or
 * faces change, whatever writes the row, and the fields the checks use that do not move it.
 * So a change of the faces fails the guard without the faces being sent or compared.
 */
function templateGuardRow(t: TemplateInfo) {
  return {
    id: t.id,
    organization_id: t.organization_id,
    version: t.version,
    updated_at: t.updated_at,
    actions: t.actions,
    is_public: t.is_public,
    custom_schema: t.custom_schema,
  };
}

/**
 * The group's single statement. `charges` has one entry per paying organization; `templates`
 * are the templates the checks read, as they were then (each must be unchanged: every field
 * the checks use, not only updated_at, since a write outside the service may leave it as it
 * was; the faces, name, description and category through `version`); `hooks`
 * are data-modifying statements with a RETURNING clause (the hooks' rows), run as CTEs of
 * the same statement. Answers one row: `balances`, what each organization holds after its
 * debit.
 *
 * Order matters for concurrency: the target list first runs every insert and the guarded
 * updates of wallets and objects, and only then takes the organizations' balance rows (in
 * id order, so concurrent groups cannot deadlock on them), which are then held only for the
 * ledger rows and the commit.
 *
 * `fenced`: paying organizations whose template switches the statement must not cross
 * (the optimistic path's organizations with mints; the locked path share-locks its mints'
 * templates instead, group-read.ts). The template guard reads every template in the
 * statement's snapshot, which a switch committing while the statement runs does not show,
 * and the switch (templates/service.ts) cannot see a new object before it commits. So for
 * each fenced organization the statement also compares `template_switches` as its snapshot
 * shows it with the row it has just locked for the debit (an UPDATE sees the latest row): a
 * switch that committed in between moved it, and the guard fails (ONS01). Once the row is
 * locked, no switch of that organization commits before this statement does, and the
 * switch's own copy, made after it has waited for this lock, sees the new objects. One
 * primary-key read of a row the statement locks anyway; nothing when no mint.
 */
export function groupStatement(
  w: GroupWrite,
  charges: readonly GroupCharge[],
  now: Date,
  templates: readonly TemplateInfo[],
  hooks: readonly HookStatement[],
  batchJoin: BatchJoin | null,
  fenced: readonly string[] = [],
): SQL {
  const fees = charges.map((c) => ({
    id: c.orgId,
    total: c.totalFeeWei.toString(),
    pv: c.policy?.version ?? null,
  }));
  const uses = charges.flatMap((c) => c.policy?.uses ?? []);
  const ledger = charges.flatMap((c) => c.ledger.map((l) => ({ ...l, org_id: c.orgId })));
  const writing = hooks.filter((h): h is WritingStatement => !isGuard(h));
  const guards = hooks.filter(isGuard).map((h) => sql` AND (${h.guard})`);
  const hookCtes = writing.map((h, i) => sql`, ${sql.raw(`hook_${i}`)} AS (${statementOf(h)})`);
  const hookCounts = writing.map((_, i) => sql` + (SELECT count(*) FROM ${sql.raw(`hook_${i}`)})`);
  const collected = writing.flatMap((h, i) => {
    if (!('collect' in h)) return [];
    const cte = sql.raw(`hook_${i}`);
    return [h.readBack ? sql`(${h.readBack(cte)})` : sql`(SELECT json_agg(h) FROM ${cte} h)`];
  });
  // In the statement's snapshot (a plain read) against the locked row (the debit's RETURNING).
  const fenceCte =
    fenced.length === 0
      ? sql``
      : sql`, fence AS (
      SELECT o.id, o.template_switches FROM organizations o
      WHERE o.id IN (SELECT jsonb_array_elements_text(${json(fenced)})))`;
  const fenceHeld =
    fenced.length === 0
      ? sql``
      : sql` AND NOT EXISTS (SELECT 1 FROM fence f JOIN debit d ON d.id = f.id
          WHERE d.template_switches <> f.template_switches)`;
  const join =
    batchJoin ??
    sql`SELECT NULL::text AS id, NULL::bigint AS seq_end, NULL::text AS next_id,
      NULL::bigint AS next_end WHERE false`;
  return sql`
    WITH group_batch AS MATERIALIZED (
      SELECT j.id, j.seq_end, j.next_id, j.next_end
      FROM (SELECT 1) AS one LEFT JOIN (${join}) AS j ON true
    ), new_objects AS (
      ${insertObjects(json(w.newObjects))}
    ), changed_objects AS (
      ${updateObjects(json(w.changedObjects))}
    ), logs AS (
      INSERT INTO action_logs (id, organization_id, hash, name, wallet_id, wallet, signature_type,
        signature, nonce, params, expires, object_id, template_id, template_version, fee_wei,
        batch_id, seq, prev_integrity_hash, integrity_hash, created_at)
      SELECT r.id, r.organization_id, r.hash, r.name, r.wallet_id, r.wallet, r.signature_type,
        r.signature, r.nonce, r.params, r.expires, r.object_id, r.template_id, r.template_version,
        r.fee_wei::numeric,
        CASE WHEN r.seq < r.seq_end THEN r.batch WHEN r.seq < r.next_end THEN r.next_id END,
        r.seq, r.prev_integrity_hash,
        r.integrity_hash, r.when_created::timestamptz
      FROM (
        -- Numbered after the join (the sort runs first: nextval is volatile), in group order.
        SELECT x.*, g.id AS batch, g.seq_end, g.next_id, g.next_end,
          nextval('action_log_seq') AS seq
        FROM group_batch g, ROWS FROM (jsonb_to_recordset(${json(w.logs)}) AS (id text,
          organization_id text, hash text, name text, wallet_id text, wallet text,
          signature_type text, signature jsonb, nonce bigint, params jsonb, expires text,
          object_id text, template_id text, template_version integer, fee_wei text,
          prev_integrity_hash text, integrity_hash text, when_created text)) WITH ORDINALITY AS x(${LOG_FIELDS}, ord)
        ORDER BY x.ord
      ) AS r
      RETURNING id, batch_id
    ), nonces AS (
      ${advanceNonces(json(w.nonces))}
    ), sign_counts AS (
      ${raiseSignCounts(json(w.signCounts))}
    ), templates_unchanged AS (
      -- One primary-key lookup per template (a correlated subquery: never a scan of every
      -- organization's templates), comparing small values only: never the faces.
      SELECT count(*) AS n FROM jsonb_to_recordset(${json(templates.map(templateGuardRow))})
        AS r(id text, organization_id text, version integer, updated_at timestamptz,
          actions text[], is_public boolean, custom_schema jsonb)
      WHERE (SELECT t.version = r.version AND t.updated_at = r.updated_at
          AND t.organization_id = r.organization_id AND t.actions = r.actions
          AND t.is_public = r.is_public
          AND t.custom_schema IS NOT DISTINCT FROM r.custom_schema
        FROM templates t WHERE t.id = r.id)
    ), credentials_live AS (
      SELECT count(*) AS n FROM credentials c
      JOIN jsonb_to_recordset(${json(w.credentials)}) AS r(wallet_id text, type text,
        external_id text)
        ON c.type = r.type AND c.external_id = r.external_id AND c.wallet_id = r.wallet_id
      WHERE c.removed_at IS NULL
    )${sql.join(hookCtes)}, fees AS (
      SELECT * FROM jsonb_to_recordset(${json(fees)}) AS r(id text, total numeric, pv bigint)
    )${fenceCte}, payers AS (
      SELECT o.id FROM organizations o WHERE o.id IN (SELECT id FROM fees)
      ORDER BY o.id FOR NO KEY UPDATE
    ), debit AS (
      ${debitFees()}
    ), ledger AS (
      ${insertFeeLedgerRows(json(ledger), now)}
    ), policy_use AS (${policyUseCte(uses, sql`debit`)})
    SELECT
      (SELECT count(*) FROM new_objects) + (SELECT count(*) FROM logs)
        + (SELECT count(*) FROM sign_counts)${sql.join(hookCounts)} AS written,
      ons_group_guard(
        (SELECT count(*) FROM nonces) = ${w.nonces.length}::int,
        (SELECT count(*) FROM changed_objects) = ${w.changedObjects.length}::int${sql.join(guards)},
        (SELECT n FROM templates_unchanged) = ${templates.length}::int${fenceHeld},
        (SELECT count(*) FROM debit) = ${fees.length}::int,
        (SELECT n FROM credentials_live) = ${w.credentials.length}::int
          -- The policies' caps over their windows still hold (checked once the debit held).
          AND ((SELECT count(*) FROM debit) <> ${fees.length}::int
            OR (SELECT count(*) FROM policy_use WHERE ok) = ${uses.length}::int)
      ) AS ok,
      (SELECT json_agg(json_build_object('id', id, 'balance', balance_wei::text)) FROM debit)
        AS balances,
      (SELECT id FROM group_batch) AS batch_id,
      (SELECT json_object_agg(id, batch_id) FROM logs
        WHERE batch_id IS DISTINCT FROM (SELECT id FROM group_batch)) AS overflow,
      json_build_array(${sql.join(collected, sql`, `)}) AS collected`;
}

/**
 * What the statement answered, or GroupGuardFailed when a guard aborted it. `hooks` are the
 * hook statements it was built with (their collected rows go to their `committed`).
 */
export async function runGroupStatement(
  run: RowRunner,
  statement: SQL,
  hooks: readonly HookStatement[],
): Promise<GroupResult> {
  try {
    const rows = await run<{
      balances: { id: string; balance: string }[] | null;
      batch_id: string | null;
      overflow: Record<string, string | null> | null;
      collected: (unknown[] | null)[];
    }>(statement);
    const row = rows[0]!;
    const takers = hooks.filter((h): h is CollectedStatement => 'collect' in h);
    return {
      balances: new Map((row.balances ?? []).map((b) => [b.id, BigInt(b.balance)])),
      batchId: row.batch_id,
      overflow: new Map(Object.entries(row.overflow ?? {})),
      afterCommit: () => takers.forEach((h, i) => h.committed(row.collected[i] ?? [])),
    };
  } catch (err) {
    const e = err as {
      code?: string;
      message?: string;
      cause?: { code?: string; message?: string };
    };
    // drizzle wraps driver errors; the SQLSTATE is on the error or its cause.
    const code = e.code ?? e.cause?.code;
    if (code === 'ONS01' || code === 'ONS02') {
      throw new GroupGuardFailed(e.cause?.message ?? e.message ?? 'guard', code === 'ONS02');
    }
    throw err;
  }
}
