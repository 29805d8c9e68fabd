import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';
import type { ListSpec } from '../../lib/list.js';

export type BalanceRow = { balance_wei: string; created_at: DbTime };

export async function findBalance(exec: Executor, orgId: string): Promise<BalanceRow | null> {
  const { rows } = await exec.execute<BalanceRow>(sql`SELECT balance_wei, created_at
    FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL`);
  return rows[0] ?? null;
}

/** The organization's balance (closed or not), or null when there is no such organization. */
export async function balanceOf(exec: Executor, orgId: string): Promise<bigint | null> {
  const { rows } = await exec.execute<{ balance_wei: string }>(
    sql`SELECT balance_wei FROM organizations WHERE id = ${orgId}`,
  );
  return rows[0] ? BigInt(rows[0].balance_wei) : null;
}

export interface NewLedgerRow {
  id: string;
  orgId: string;
  kind: string;
  /** Signed: credits positive, debits negative. */
  amountWei: bigint;
  balanceAfterWei: bigint;
  refId: string | null;
  now: Date;
}

export async function insertLedgerEntry(exec: Executor, e: NewLedgerRow): Promise<void> {
  await exec.execute(sql`INSERT INTO ledger_entries
    (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
    VALUES (${e.id}, ${e.orgId}, ${e.kind}, ${e.amountWei.toString()}::numeric,
      ${e.balanceAfterWei.toString()}::numeric, ${e.refId}, ${e.now})`);
}

/** History pages are keyed by bucket start alone: one bucket per start. */
export const HISTORY_PAGING: ListSpec = {
  sortable: { start: { column: sql`start`, type: 'timestamp' } },
  defaultSort: 'start',
  idColumn: sql`start`,
};

export type HistoryRow = {
  start: DbTime;
  end: DbTime;
  credits_wei: string;
  debits_wei: string;
  closing_balance_wei: string;
};

export interface HistoryPageQuery {
  orgId: string;
  unit: 'hour' | 'day' | 'week' | 'month';
  /** The range; buckets are the whole UTC intervals that overlap it. */
  from: Date;
  to: Date;
  /** Start of the last bucket of the previous page. */
  after: Date | null;
  order: 'asc' | 'desc';
  limit: number;
}

/**
 * One page of balance-history buckets, computed in one statement: generate_series makes
 * the page's bucket starts (date_trunc, UTC), the ledger is summed per bucket, and each
 * closing balance is worked back from the current balance, which equals the ledger's
 * sum: closing(b) = balance − Σ(amounts at or after b.end). Reading the balance and the
 * ledger in one statement sees one snapshot, so the figures always agree; only ledger
 * rows of this page and after it are read.
 */
export async function historyPage(exec: Executor, q: HistoryPageQuery): Promise<HistoryRow[]> {
  const step = `1 ${q.unit}`;
  const dir = q.order === 'desc' ? sql`DESC` : sql`ASC`;
  const afterCond =
    q.after === null
      ? sql`TRUE`
      : q.order === 'desc'
        ? sql`gs < (${q.after}::timestamptz AT TIME ZONE 'UTC')`
        : sql`gs > (${q.after}::timestamptz AT TIME ZONE 'UTC')`;
  const { rows } = await exec.execute<HistoryRow>(sql`
    WITH page AS (
      SELECT gs AT TIME ZONE 'UTC' AS start, (gs + ${step}::interval) AT TIME ZONE 'UTC' AS "end"
      FROM generate_series(
        date_trunc(${q.unit}, ${q.from}::timestamptz AT TIME ZONE 'UTC'),
        date_trunc(${q.unit}, ${q.to}::timestamptz AT TIME ZONE 'UTC'),
        ${step}::interval) AS gs
      WHERE ${afterCond}
      ORDER BY gs ${dir}
      LIMIT ${q.limit + 1}
    ),
    later AS (
      SELECT COALESCE(SUM(l.amount_wei), 0) AS s FROM ledger_entries l
      WHERE l.organization_id = ${q.orgId}
        AND l.created_at >= (SELECT max("end") FROM page)
    ),
    sums AS (
      SELECT p.start, p."end",
        COALESCE(SUM(l.amount_wei) FILTER (WHERE l.amount_wei > 0), 0) AS credits,
        COALESCE(-SUM(l.amount_wei) FILTER (WHERE l.amount_wei < 0), 0) AS debits,
        COALESCE(SUM(l.amount_wei), 0) AS net
      FROM page p LEFT JOIN ledger_entries l ON l.organization_id = ${q.orgId}
        AND l.created_at >= p.start AND l.created_at < p."end"
      GROUP BY p.start, p."end"
    )
    SELECT s.start, s."end", s.credits::text AS credits_wei, s.debits::text AS debits_wei,
      (o.balance_wei - (SELECT later.s FROM later)
        - (SUM(s.net) OVER (ORDER BY s.start DESC) - s.net))::text AS closing_balance_wei
    FROM sums s CROSS JOIN (SELECT balance_wei FROM organizations WHERE id = ${q.orgId}) o
    ORDER BY s.start ${dir}`);
  return rows;
}

/** The threshold and whether the balance is below it. */
export type LowBalanceRow = { balance_wei: string; low_balance_wei: string | null };

export async function findLowBalance(exec: Executor, orgId: string): Promise<LowBalanceRow | null> {
  const { rows } = await exec.execute<LowBalanceRow>(sql`SELECT balance_wei::text AS balance_wei,
    low_balance_wei::text AS low_balance_wei
    FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL`);
  return rows[0] ?? null;
}

/**
 * The group statement's (ebus/repo/group-write.ts) ledger rows of the action fees, given JSON
 * rows `(id, org_id, amount_wei, after_offset_wei, ref_id)`; reads its `debit` CTE.
 */
export function insertFeeLedgerRows(rows: SQL, now: Date): SQL {
  return sql`INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
      SELECT r.id, d.id, 'action_fee', r.amount_wei::numeric,
        d.balance_wei + r.after_offset_wei::numeric, r.ref_id, ${now.toISOString()}::timestamptz
      FROM jsonb_to_recordset(${rows}) AS r(id text, org_id text, amount_wei text,
        after_offset_wei text, ref_id text)
      JOIN debit d ON d.id = r.org_id
      RETURNING 1`;
}
