import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asNumber, type DbTime } from '../../../db/values.js';
import {
  and,
  byCreation,
  dateFilters,
  keysetCondition,
  orderBy,
  type ParsedList,
} from '../../../lib/list.js';
import { adoptWaitingActions, moveActionsToBatch } from '../../ebus/index.js';
import { JOIN_LOCK } from './join.js';
import {
  COLUMNS,
  maybeDate,
  rowsOf,
  toRow,
  type AffectedAction,
  type BatchRow,
  type BatchStatus,
  type RawBatch,
} from './rows.js';

/** Paging of the explorer's list: newest first by creation, then id. */
export const BATCH_LIST = byCreation();

export * from './rows.js';
export * from './sealed.js';
export * from './views.js';

// --- Locks -------------------------------------------------------------------------------

/** Takes a transaction-level advisory lock if free; false when another holds it. */
export async function tryLock(exec: Executor, key: number): Promise<boolean> {
  const { rows } = await exec.execute<{ ok: boolean }>(
    sql`SELECT pg_try_advisory_xact_lock(${key}::bigint) AS ok`,
  );
  return rows[0]!.ok;
}

/**
 * Waits, at most `timeoutMs`, until every group that joined a batch has committed, and
 * holds new ones off until the transaction ends (migration 0018). Throws PostgreSQL's
 * lock_not_available (55P03) when the wait runs out.
 */
export async function holdJoins(exec: Executor, timeoutMs: number): Promise<void> {
  await exec.execute(sql`SELECT set_config('lock_timeout', ${`${timeoutMs}ms`}, true)`);
  await exec.execute(sql`SELECT pg_advisory_xact_lock(${JOIN_LOCK}::bigint)`);
  await exec.execute(sql`SELECT set_config('lock_timeout', '0', true)`);
}

/**
 * Waits, at most `timeoutMs`, until no transaction that began before this call still holds
 * the join lock: every group that joined a batch before then has committed or rolled back.
 * Joins go on meanwhile. False when the wait ran out.
 */
export async function joinsSettled(exec: Executor, timeoutMs: number): Promise<boolean> {
  // As text: the comparison keeps PostgreSQL's microseconds.
  const { rows } = await exec.execute<{ t0: string }>(sql`SELECT clock_timestamp()::text AS t0`);
  const t0 = rows[0]!.t0;
  const until = performance.now() + timeoutMs;
  for (;;) {
    const { rows: open } = await exec.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
        AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid::int8 * 4294967296 + l.objid::int8 = ${JOIN_LOCK}::int8
        AND a.xact_start < ${t0}::timestamptz`);
    if (open[0]!.n === 0) return true;
    if (performance.now() > until) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
}

// --- The building batch ------------------------------------------------------------------

export async function findBuilding(exec: Executor): Promise<BatchRow | null> {
  const rows = await rowsOf(exec, sql`SELECT ${COLUMNS} FROM batches WHERE status = 'building'`);
  return rows[0] ?? null;
}

/**
 * The building batch with what decides whether it is due, in one query (the sealer asks
 * this on every pass): the next number the sequence hands out and its first action's time.
 */
export interface BuildingState {
  batch: BatchRow;
  nextSeq: number;
  firstActionAt: Date | null;
}

export async function buildingState(exec: Executor): Promise<BuildingState | null> {
  const { rows } = await exec.execute<
    RawBatch & { next_seq: string | number; first_at: DbTime | null }
  >(sql`
    SELECT ${COLUMNS},
      (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM action_log_seq)
        AS next_seq,
      (SELECT a.created_at FROM action_logs a WHERE a.batch_id = b.id ORDER BY a.seq LIMIT 1)
        AS first_at
    FROM batches b WHERE status = 'building'`);
  const r = rows[0];
  if (!r) return null;
  const { next_seq, first_at, ...raw } = r;
  return { batch: toRow(raw), nextSeq: asNumber(next_seq), firstActionAt: maybeDate(first_at) };
}

/** The next execution-order number the sequence will hand out. */
export async function nextSeq(exec: Executor): Promise<number> {
  const { rows } = await exec.execute<{ next: string | number }>(sql`
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END AS next
    FROM action_log_seq`);
  return asNumber(rows[0]!.next);
}

/** The lowest number of an action waiting for a batch, or null when none waits. */
export async function lowestUnbatched(exec: Executor): Promise<number | null> {
  const { rows } = await exec.execute<{ seq: string | number }>(
    sql`SELECT seq FROM action_logs WHERE batch_id IS NULL ORDER BY seq LIMIT 1`,
  );
  return rows[0] ? asNumber(rows[0].seq) : null;
}

/** How many actions joined the batch, and their fees. */
export async function memberTotals(
  exec: Executor,
  batchId: string,
): Promise<{ count: number; feeWei: string }> {
  const { rows } = await exec.execute<{ n: number; fee: string }>(sql`
    SELECT count(*)::int AS n, coalesce(sum(fee_wei), 0)::text AS fee
    FROM action_logs WHERE batch_id = ${batchId}`);
  return { count: rows[0]!.n, feeWei: rows[0]!.fee };
}

/** A batch's action as its explorer record lists it, before private ones are masked. */
export type MemberSummary = AffectedAction & { integrity_hash: string; private: boolean };

/**
 * The actions of each batch given, in execution order (`alias`: the object's id), each with
 * whether its object is private now (a sealed batch's `private_actions` say what it sealed).
 * `perBatch`: only the first that many of each batch, read as such (the index on
 * `(batch_id, seq)`); null: all of them.
 */
export async function memberSummaries(
  exec: Executor,
  batchIds: readonly string[],
  perBatch: number | null = null,
): Promise<Map<string, MemberSummary[]>> {
  const out = new Map<string, MemberSummary[]>(batchIds.map((id) => [id, []]));
  if (batchIds.length === 0) return out;
  const { rows } = await exec.execute<MemberSummary & { batch_id: string }>(sql`
    SELECT b.id AS batch_id, a.id, a.hash, a.name, coalesce(a.object_id, '') AS alias,
      a.integrity_hash,
      NOT coalesce((SELECT o.is_public FROM objects o WHERE o.id = a.object_id), true) AS private
    FROM jsonb_array_elements_text(${JSON.stringify(batchIds)}::jsonb) AS b(id)
    CROSS JOIN LATERAL (
      SELECT l.id, l.hash, l.name, l.object_id, l.integrity_hash, l.seq FROM action_logs l
      WHERE l.batch_id = b.id ORDER BY l.seq ${perBatch === null ? sql`` : sql`LIMIT ${perBatch}`}
    ) a
    ORDER BY b.id, a.seq`);
  for (const { batch_id, ...a } of rows) out.get(batch_id)!.push(a);
  return out;
}

export async function lastSequence(exec: Executor): Promise<number> {
  const { rows } = await exec.execute<{ s: string | number | null }>(
    sql`SELECT max(sequence) AS s FROM batches`,
  );
  return rows[0]!.s === null ? 0 : asNumber(rows[0]!.s);
}

/** The numbers a building batch takes and the batch named to follow it. */
export interface BatchRange {
  seqStart: number;
  capacity: number;
  nextId: string;
  nextCapacity: number;
}

/** Opens a building batch over the numbers [seqStart, seqStart + capacity). */
export async function openBatch(
  exec: Executor,
  b: BatchRange & { id: string; sequence: number; now: Date },
): Promise<void> {
  await exec.execute(sql`
    INSERT INTO batches (id, sequence, status, seq_start, capacity, next_id, next_capacity,
      created_at, updated_at)
    VALUES (${b.id}, ${b.sequence}, 'building', ${b.seqStart}, ${b.capacity}, ${b.nextId},
      ${b.nextCapacity}, ${b.now}, ${b.now})`);
  await adoptWaiting(exec, b.id, b.seqStart, b.capacity);
}

/**
 * A building batch that ended with no action starts again over new numbers; the actions that
 * already joined the batch named to follow it (`formerNextId`) join it instead.
 */
export async function restartEmpty(
  exec: Executor,
  id: string,
  formerNextId: string | null,
  r: BatchRange & { now: Date },
): Promise<void> {
  await exec.execute(sql`
    UPDATE batches SET seq_start = ${r.seqStart}, capacity = ${r.capacity}, next_id = ${r.nextId},
      next_capacity = ${r.nextCapacity}, updated_at = ${r.now}
    WHERE id = ${id}`);
  if (formerNextId !== null) {
    await moveActionsToBatch(exec, formerNextId, id);
  }
  await adoptWaiting(exec, id, r.seqStart, r.capacity);
}

/** The actions of the batch's range logged while no batch could take them join it. */
export async function adoptWaiting(exec: Executor, id: string, seqStart: number, capacity: number) {
  await adoptWaitingActions(exec, id, seqStart, capacity);
}

/** Seals a building batch: no action joins it any more. */
export async function markSealed(
  exec: Executor,
  id: string,
  s: { now: Date; windowEnd: Date; count: number; feeWei: string },
): Promise<void> {
  await exec.execute(sql`
    UPDATE batches SET status = 'proving', sealed_at = ${s.now},
      challenge_window_end = ${s.windowEnd}, actions_count = ${s.count},
      total_fee_wei = ${s.feeWei}::numeric, updated_at = ${s.now}
    WHERE id = ${id} AND status = 'building'`);
}

// --- Reads -------------------------------------------------------------------------------

export async function findBatch(exec: Executor, id: string): Promise<BatchRow | null> {
  const rows = await rowsOf(exec, sql`SELECT ${COLUMNS} FROM batches WHERE id = ${id}`);
  return rows[0] ?? null;
}

export async function listBatches(
  exec: Executor,
  page: ParsedList,
  query: Record<string, unknown>,
  status: BatchStatus | undefined,
): Promise<BatchRow[]> {
  const where = and([
    status !== undefined ? sql`status = ${status}` : undefined,
    ...dateFilters(query, sql`created_at`),
    keysetCondition(page),
  ]);
  return rowsOf(
    exec,
    sql`SELECT ${COLUMNS} FROM batches WHERE ${where} ${orderBy(page)} LIMIT ${page.limit + 1}`,
  );
}

/** Mean actions per batch over the last `window` sealed (not failed) batches. */
export async function recentAverageSize(exec: Executor, window: number): Promise<number | null> {
  const { rows } = await exec.execute<{ avg: string | number | null }>(sql`
    SELECT avg(actions_count)::float8 AS avg FROM (
      SELECT actions_count FROM batches WHERE status IN ('proving', 'proven', 'finalized')
      ORDER BY sequence DESC LIMIT ${window}) recent`);
  const v = rows[0]?.avg ?? null;
  return v === null ? null : Number(v);
}
