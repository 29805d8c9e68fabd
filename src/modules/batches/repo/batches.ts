import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber, type DbTime } from '../../../db/values.js';
import {
  and,
  byCreation,
  dateFilters,
  keysetCondition,
  orderBy,
  type ParsedList,
} from '../../../lib/list.js';
import type { BatchHeader } from '../formulas.js';
import type { BatchProof } from '../prover.js';
import { JOIN_LOCK } from './join.js';

/** Paging of the explorer's list: newest first by creation, then id. */
export const BATCH_LIST = byCreation();

export type BatchStatus = 'building' | 'proving' | 'proven' | 'finalized' | 'failed';

export type AffectedAction = { id: string; hash: string; name: string; alias: string };

/** A batch row as the service reads it (never the content bytes). */
export interface BatchRow {
  id: string;
  sequence: number;
  status: BatchStatus;
  seq_start: number;
  capacity: number;
  /** The batch named to follow this one, and how many numbers it takes (migration 0019). */
  next_id: string | null;
  next_capacity: number | null;
  version: number;
  hash: string | null;
  prev_hash: string | null;
  integrity_root: string | null;
  prev_integrity_root: string | null;
  actions_hash: string | null;
  commitment: string | null;
  actions_count: number;
  total_fee_wei: string;
  ipfs_url: string | null;
  proof: BatchProof | null;
  proof_id: string | null;
  error: string | null;
  sender: string | null;
  l2_tx_hash: string | null;
  l2_finalization_tx_hash: string | null;
  /** Failed attempts of the current step (proving, then anchoring). */
  attempts: number;
  next_attempt_at: Date | null;
  sealed_at: Date | null;
  challenge_window_end: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

type RawBatch = Omit<
  BatchRow,
  | 'sequence'
  | 'seq_start'
  | 'next_attempt_at'
  | 'sealed_at'
  | 'challenge_window_end'
  | 'completed_at'
  | 'created_at'
  | 'updated_at'
> & {
  sequence: number | string;
  seq_start: number | string;
  next_attempt_at: DbTime | null;
  sealed_at: DbTime | null;
  challenge_window_end: DbTime | null;
  completed_at: DbTime | null;
  created_at: DbTime;
  updated_at: DbTime;
};

const COLUMNS =
  sql.raw(`id, sequence, status, seq_start, capacity, next_id, next_capacity, version, hash, prev_hash,
  integrity_root, prev_integrity_root, actions_hash, commitment, actions_count,
  total_fee_wei::text AS total_fee_wei, ipfs_url, proof, proof_id, error,
  sender, l2_tx_hash, l2_finalization_tx_hash, attempts, next_attempt_at, sealed_at,
  challenge_window_end, completed_at, created_at, updated_at`);

const maybeDate = (v: DbTime | null): Date | null => (v === null ? null : asDate(v));

function toRow(r: RawBatch): BatchRow {
  return {
    ...r,
    sequence: asNumber(r.sequence),
    seq_start: asNumber(r.seq_start),
    next_attempt_at: maybeDate(r.next_attempt_at),
    sealed_at: maybeDate(r.sealed_at),
    challenge_window_end: maybeDate(r.challenge_window_end),
    completed_at: maybeDate(r.completed_at),
    created_at: asDate(r.created_at),
    updated_at: asDate(r.updated_at),
  };
}

async function rowsOf(exec: Executor, query: ReturnType<typeof sql>): Promise<BatchRow[]> {
  const { rows } = await exec.execute<RawBatch>(query);
  return rows.map(toRow);
}

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

/** The actions of each batch given, in execution order (`alias`: the object's id). */
export async function memberSummaries(
  exec: Executor,
  batchIds: readonly string[],
): Promise<Map<string, AffectedAction[]>> {
  const out = new Map<string, AffectedAction[]>(batchIds.map((id) => [id, []]));
  if (batchIds.length === 0) return out;
  const { rows } = await exec.execute<AffectedAction & { batch_id: string }>(sql`
    SELECT batch_id, id, hash, name, coalesce(object_id, '') AS alias FROM action_logs
    WHERE batch_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(batchIds)}::jsonb))
    ORDER BY batch_id, seq`);
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
    await exec.execute(
      sql`UPDATE action_logs SET batch_id = ${id} WHERE batch_id = ${formerNextId}`,
    );
  }
  await adoptWaiting(exec, id, r.seqStart, r.capacity);
}

/** The actions of the batch's range logged while no batch could take them join it. */
export async function adoptWaiting(exec: Executor, id: string, seqStart: number, capacity: number) {
  await exec.execute(sql`
    UPDATE action_logs SET batch_id = ${id}
    WHERE batch_id IS NULL AND seq >= ${seqStart} AND seq < ${seqStart + capacity}`);
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

// --- Proving -----------------------------------------------------------------------------

/** Sealed batches whose header is not written yet, in chain order. */
/** Whether a sealed batch waits for its header and proof now (a cheap look, no lock). */
export async function hasProvingWork(exec: Executor, now: Date): Promise<boolean> {
  const { rows } = await exec.execute<{ any: boolean }>(sql`
    SELECT EXISTS (SELECT 1 FROM batches WHERE status = 'proving'
      AND (next_attempt_at IS NULL OR next_attempt_at <= ${now})) AS any`);
  return rows[0]!.any;
}

export async function unprovenBatches(exec: Executor): Promise<BatchRow[]> {
  return rowsOf(
    exec,
    sql`SELECT ${COLUMNS} FROM batches WHERE status = 'proving' ORDER BY sequence`,
  );
}

export async function findBySequence(exec: Executor, sequence: number): Promise<BatchRow | null> {
  const rows = await rowsOf(exec, sql`SELECT ${COLUMNS} FROM batches WHERE sequence = ${sequence}`);
  return rows[0] ?? null;
}

/** A sealed batch's header (design.md §6) with its hash and content CID. */
export type SealedHeader = Omit<BatchHeader, 'id' | 'sequence' | 'when_created'> & {
  hash: string;
  ipfs_url: string;
};

/** Writes a sealed batch's header (it stays `proving` until its proof). */
export async function saveHeader(exec: Executor, id: string, h: SealedHeader, now: Date) {
  await exec.execute(sql`
    UPDATE batches SET hash = ${h.hash}, prev_hash = ${h.prev_hash},
      integrity_root = ${h.integrity_root}, prev_integrity_root = ${h.prev_integrity_root},
      actions_hash = ${h.actions_hash}, commitment = ${h.commitment},
      actions_count = ${h.actions_count}, total_fee_wei = ${h.total_fee_wei}::numeric,
      ipfs_url = ${h.ipfs_url}, updated_at = ${now}
    WHERE id = ${id} AND status = 'proving'`);
}

/** Writes a batch's proof: it is `proven`. */
export async function saveProof(
  exec: Executor,
  id: string,
  proof: BatchProof,
  proofId: string,
  now: Date,
) {
  await exec.execute(sql`
    UPDATE batches SET status = 'proven', proof = ${JSON.stringify(proof)}::jsonb,
      proof_id = ${proofId}, error = NULL, attempts = 0, next_attempt_at = NULL,
      updated_at = ${now}
    WHERE id = ${id} AND status = 'proving'`);
}

/** A step failed for this batch: counts it and, past `maxAttempts`, fails the batch. */
export async function recordFailure(
  exec: Executor,
  id: string,
  f: { error: string; retryAt: Date; maxAttempts: number; now: Date },
): Promise<void> {
  await exec.execute(sql`
    UPDATE batches SET attempts = attempts + 1, error = ${f.error},
      next_attempt_at = ${f.retryAt},
      status = CASE WHEN attempts + 1 >= ${f.maxAttempts} THEN 'failed' ELSE status END,
      updated_at = ${f.now}
    WHERE id = ${id}`);
}

// --- Anchoring and finality --------------------------------------------------------------

/**
 * Claims the next proven batch waiting on its anchor (posting, or confirmations), oldest
 * first: its `next_attempt_at` moves `leaseMs` ahead, so no other process takes it while
 * this one talks to the chain.
 */
export async function claimAnchorWork(
  exec: Executor,
  now: Date,
  leaseMs: number,
): Promise<BatchRow | null> {
  const rows = await rowsOf(
    exec,
    sql`
    UPDATE batches SET next_attempt_at = ${new Date(now.getTime() + leaseMs)}
    WHERE id = (
      SELECT id FROM batches
      WHERE status = 'proven' AND l2_finalization_tx_hash IS NULL
        AND (next_attempt_at IS NULL OR next_attempt_at <= ${now})
      ORDER BY sequence LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING ${COLUMNS}`,
  );
  return rows[0] ?? null;
}

/** Records the anchoring transaction (or forgets a dropped one with `txHash` null). */
export async function saveAnchorTx(
  exec: Executor,
  id: string,
  a: { sender: string; txHash: string | null; checkAt: Date; now: Date },
): Promise<void> {
  await exec.execute(sql`
    UPDATE batches SET sender = ${a.sender}, l2_tx_hash = ${a.txHash},
      next_attempt_at = ${a.checkAt}, attempts = 0, error = NULL, updated_at = ${a.now}
    WHERE id = ${id}`);
}

/** The anchoring transaction is final: the block it is in. */
export async function saveAnchorFinal(exec: Executor, id: string, blockHash: string, now: Date) {
  await exec.execute(sql`
    UPDATE batches SET l2_finalization_tx_hash = ${blockHash}, next_attempt_at = NULL,
      error = NULL, updated_at = ${now}
    WHERE id = ${id}`);
}

/** The anchor's next look: when it is still pending. */
export async function checkAgainAt(exec: Executor, id: string, at: Date) {
  await exec.execute(sql`UPDATE batches SET next_attempt_at = ${at} WHERE id = ${id}`);
}

/**
 * Proven batches whose challenge window has passed (and whose anchor, when anchoring is
 * on, is final) become `finalized`; answers how many.
 */
export async function finalizeDue(exec: Executor, now: Date, anchoring: boolean) {
  const { rows } = await exec.execute<{ id: string }>(sql`
    UPDATE batches SET status = 'finalized', completed_at = ${now}, updated_at = ${now}
    WHERE status = 'proven' AND challenge_window_end <= ${now}
      ${anchoring ? sql`AND l2_finalization_tx_hash IS NOT NULL` : sql``}
    RETURNING id`);
  return rows.length;
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
