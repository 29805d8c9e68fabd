import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { SecretChange, StoredSecret } from '../../db/sealed-columns.js';
import { asDate, asNumber, type DbTime } from '../../db/values.js';

/** The log's append lock: one append at a time across every process (migration 0027). */
export const LOG_LOCK = 7_411_033_001;

const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');

export async function lock(tx: Executor): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${LOG_LOCK})`);
}

export interface CheckpointRow {
  batch_sequence: number;
  batch_id: string;
  tree_size: number;
  root: Buffer;
  note: string;
  created_at: Date;
}

type RawCheckpoint = Omit<CheckpointRow, 'root' | 'created_at' | 'batch_sequence' | 'tree_size'> & {
  batch_sequence: number | string;
  tree_size: number | string;
  root: string;
  created_at: DbTime;
};

const CHECKPOINT_COLUMNS = sql.raw(
  `batch_sequence, batch_id, tree_size, encode(root, 'hex') AS root, note, created_at`,
);

const toCheckpoint = (r: RawCheckpoint): CheckpointRow => ({
  ...r,
  batch_sequence: asNumber(r.batch_sequence),
  tree_size: asNumber(r.tree_size),
  root: bytes(r.root),
  created_at: asDate(r.created_at),
});

/** The latest checkpoint, or null while the log is empty. */
export async function latestCheckpoint(exec: Executor): Promise<CheckpointRow | null> {
  const { rows } = await exec.execute<RawCheckpoint>(sql`
    SELECT ${CHECKPOINT_COLUMNS} FROM log_checkpoints ORDER BY batch_sequence DESC LIMIT 1`);
  return rows[0] ? toCheckpoint(rows[0]) : null;
}

/** The first checkpoint of at least `size` leaves. */
export async function checkpointOfSize(
  exec: Executor,
  size: number,
): Promise<CheckpointRow | null> {
  const { rows } = await exec.execute<RawCheckpoint>(sql`
    SELECT ${CHECKPOINT_COLUMNS} FROM log_checkpoints WHERE tree_size = ${size}
    ORDER BY batch_sequence LIMIT 1`);
  return rows[0] ? toCheckpoint(rows[0]) : null;
}

export type SealedBatchRow = {
  id: string;
  sequence: number;
  hash: string | null;
  actions_hash: string | null;
  actions_count: number;
  version: number;
  private_actions: string[] | null;
};

/**
 * The batch that comes after `sequence` in the chain (the batches module's table, read
 * only: the log follows what the sealer wrote). Null when there is none yet.
 */
export async function batchAfter(exec: Executor, sequence: number): Promise<SealedBatchRow | null> {
  const { rows } = await exec.execute<SealedBatchRow & { sequence: number | string }>(sql`
    SELECT id, sequence, hash, actions_hash, actions_count, version, private_actions
    FROM batches WHERE sequence > ${sequence} ORDER BY sequence LIMIT 1`);
  const r = rows[0];
  return r ? { ...r, sequence: asNumber(r.sequence) } : null;
}

/** Appends leaves from `start` (their order is the tree's). */
export async function insertEntries(
  tx: Executor,
  start: number,
  entries: readonly { actionId: string; leaf: Buffer }[],
): Promise<void> {
  for (let i = 0; i < entries.length; i += 5_000) {
    const chunk = entries.slice(i, i + 5_000);
    await tx.execute(sql`
      INSERT INTO log_entries (log_index, action_id, leaf)
      SELECT ${start + i} + n - 1, a, decode(h, 'hex')
      FROM unnest(${sql.param(chunk.map((e) => e.actionId))}::text[],
                  ${sql.param(chunk.map((e) => hexOf(e.leaf)))}::text[])
        WITH ORDINALITY AS t(a, h, n)`);
  }
}

/** The leaves' data in the given ranges [from, to), in tree order, keyed by index. */
export async function leavesIn(
  exec: Executor,
  ranges: readonly { from: number; to: number }[],
): Promise<Map<number, Buffer>> {
  return (await treeNodes(exec, ranges, [])).leaves;
}

/** What {@link treeNodes} reads: leaves by index, stored tiles (level ≥ 1) keyed `level/idx`. */
export interface TreeNodes {
  leaves: Map<number, Buffer>;
  tiles: Map<string, Buffer>;
}

/**
 * The leaves' data in the given ranges [from, to) and the stored hash tiles (level ≥ 1) asked
 * for, in one statement: a proof's one read of the tree (docs/log.md, "Proofs").
 */
export async function treeNodes(
  exec: Executor,
  ranges: readonly { from: number; to: number }[],
  keys: readonly { level: number; idx: number }[],
): Promise<TreeNodes> {
  const out: TreeNodes = { leaves: new Map(), tiles: new Map() };
  if (ranges.length === 0 && keys.length === 0) return out;
  const { rows } = await exec.execute<{ level: number; idx: number | string; data: string }>(sql`
    SELECT 0 AS level, e.log_index AS idx, encode(e.leaf, 'hex') AS data
    FROM unnest(${sql.param(ranges.map((r) => r.from))}::bigint[],
                ${sql.param(ranges.map((r) => r.to))}::bigint[]) AS r(a, b)
    JOIN log_entries e ON e.log_index >= r.a AND e.log_index < r.b
    UNION ALL
    SELECT t.level, t.idx, encode(t.data, 'hex')
    FROM unnest(${sql.param(keys.map((k) => k.level))}::smallint[],
                ${sql.param(keys.map((k) => k.idx))}::bigint[]) AS r(l, i)
    JOIN log_tiles t ON t.level = r.l AND t.idx = r.i`);
  for (const r of rows) {
    if (r.level === 0) out.leaves.set(asNumber(r.idx), bytes(r.data));
    else out.tiles.set(`${r.level}/${asNumber(r.idx)}`, bytes(r.data));
  }
  return out;
}

/** Adds complete node hashes at the end of a tile (made on its first node). */
export async function appendToTile(
  tx: Executor,
  level: number,
  idx: number,
  data: Buffer,
): Promise<void> {
  await tx.execute(sql`
    INSERT INTO log_tiles (level, idx, data) VALUES (${level}, ${idx}, decode(${hexOf(data)}, 'hex'))
    ON CONFLICT (level, idx) DO UPDATE SET data = log_tiles.data || EXCLUDED.data`);
}

export async function saveCheckpoint(
  tx: Executor,
  c: { sequence: number; batchId: string; size: number; root: Buffer; note: string; now: Date },
): Promise<void> {
  await tx.execute(sql`
    INSERT INTO log_checkpoints (batch_sequence, batch_id, tree_size, root, note, created_at)
    VALUES (${c.sequence}, ${c.batchId}, ${c.size}, decode(${hexOf(c.root)}, 'hex'), ${c.note},
      ${c.now})`);
}

export interface EntryRow {
  log_index: number;
  action_id: string;
  leaf: Buffer;
}

type RawEntry = { log_index: number | string; action_id: string; leaf: string };
const toEntry = (r: RawEntry): EntryRow => ({
  log_index: asNumber(r.log_index),
  action_id: r.action_id,
  leaf: bytes(r.leaf),
});

/**
 * The first entry whose leaf data is `leaf` (null: none) and the latest checkpoint's tree
 * size (0 while the log is empty), in one statement: an inclusion proof's first read.
 */
export async function entryOfLeafAndSize(
  exec: Executor,
  leaf: Buffer,
): Promise<{ entry: EntryRow | null; size: number }> {
  const { rows } = await exec.execute<
    { tree_size: number | string | null } & { [K in keyof RawEntry]: RawEntry[K] | null }
  >(sql`
    SELECT (SELECT tree_size FROM log_checkpoints ORDER BY batch_sequence DESC LIMIT 1),
      e.log_index, e.action_id, encode(e.leaf, 'hex') AS leaf
    FROM (SELECT) AS one LEFT JOIN LATERAL (
      SELECT log_index, action_id, leaf FROM log_entries
      WHERE leaf = decode(${hexOf(leaf)}, 'hex') ORDER BY log_index LIMIT 1) AS e ON true`);
  const r = rows[0]!;
  const size = r.tree_size === null ? 0 : asNumber(r.tree_size);
  if (r.log_index === null || r.action_id === null || r.leaf === null) return { entry: null, size };
  return { entry: toEntry({ log_index: r.log_index, action_id: r.action_id, leaf: r.leaf }), size };
}

export async function entryOfAction(exec: Executor, actionId: string): Promise<EntryRow | null> {
  const { rows } = await exec.execute<RawEntry>(sql`
    SELECT log_index, action_id, encode(leaf, 'hex') AS leaf FROM log_entries
    WHERE action_id = ${actionId}`);
  return rows[0] ? toEntry(rows[0]) : null;
}

/** A checkpoint's stored cosignature lines, by witness name. */
export async function cosignatures(exec: Executor, sequence: number): Promise<string[]> {
  const { rows } = await exec.execute<{ line: string }>(sql`
    SELECT line FROM log_cosignatures WHERE batch_sequence = ${sequence} ORDER BY witness`);
  return rows.map((r) => r.line);
}

export async function saveCosignature(
  exec: Executor,
  c: { sequence: number; witness: string; line: string; now: Date },
): Promise<void> {
  await exec.execute(sql`
    INSERT INTO log_cosignatures (batch_sequence, witness, line, created_at)
    VALUES (${c.sequence}, ${c.witness}, ${c.line}, ${c.now})
    ON CONFLICT (batch_sequence, witness)
    DO UPDATE SET line = EXCLUDED.line, created_at = EXCLUDED.created_at`);
}

/** When each witness last cosigned the checkpoint of batch `sequence`, by witness name. */
export async function cosignedAt(exec: Executor, sequence: number): Promise<Map<string, Date>> {
  const { rows } = await exec.execute<{ witness: string; created_at: Date | string }>(sql`
    SELECT witness, created_at FROM log_cosignatures WHERE batch_sequence = ${sequence}`);
  return new Map(rows.map((r) => [r.witness, new Date(r.created_at)]));
}

/** The tree size a witness last cosigned (0: none yet). */
export async function witnessSize(exec: Executor, witness: string): Promise<number> {
  const { rows } = await exec.execute<{ tree_size: number | string }>(sql`
    SELECT tree_size FROM log_witness_state WHERE witness = ${witness}`);
  return rows[0] ? asNumber(rows[0].tree_size) : 0;
}

export async function saveWitnessSize(
  exec: Executor,
  witness: string,
  size: number,
  now: Date,
): Promise<void> {
  await exec.execute(sql`
    INSERT INTO log_witness_state (witness, tree_size, updated_at) VALUES (${witness}, ${size}, ${now})
    ON CONFLICT (witness) DO UPDATE SET tree_size = EXCLUDED.tree_size, updated_at = EXCLUDED.updated_at`);
}

/** The log key's seed (hex): the first instance's candidate, read back by every instance. */
export async function ensureLogKey(exec: Executor, seedHex: string, now: Date): Promise<string> {
  await exec.execute(sql`
    INSERT INTO log_keys (id, seed, created_at) VALUES ('current', ${seedHex}, ${now})
    ON CONFLICT (id) DO NOTHING`);
  const { rows } = await exec.execute<{ seed: string }>(
    sql`SELECT seed FROM log_keys WHERE id = 'current'`,
  );
  return rows[0]!.seed;
}

/** The column that keeps the log key's seed (src/lib/sealed-secret.ts). */
export const LOG_SEED = 'log_keys.seed';

/** Log key seeds that do or do not start with `prefix` (sealed ones). */
export async function logSeeds(
  exec: Executor,
  prefix: string,
  starting: boolean,
): Promise<StoredSecret<string>[]> {
  const { rows } = await exec.execute<StoredSecret<string>>(sql`
    SELECT id AS row, seed AS value FROM log_keys WHERE starts_with(seed, ${prefix}) = ${starting}`);
  return rows;
}

export async function storeLogSeeds(
  exec: Executor,
  changes: readonly SecretChange<string>[],
): Promise<number> {
  const { rows } = await exec.execute(sql`
    UPDATE log_keys k SET seed = v.value
    FROM unnest(${sql.param(changes.map((c) => c.row))}::text[],
      ${sql.param(changes.map((c) => c.old))}::text[],
      ${sql.param(changes.map((c) => c.value))}::text[]) AS v(id, old, value)
    WHERE k.id = v.id AND k.seed = v.old
    RETURNING k.id`);
  return rows.length;
}

/** An action's organization and whether its object is public (false for none); null: no action. */
export async function actionAccess(
  exec: Executor,
  actionId: string,
): Promise<{ organization_id: string; public: boolean } | null> {
  const { rows } = await exec.execute<{ organization_id: string; public: boolean }>(sql`
    SELECT a.organization_id, coalesce(o.is_public, false) AS public FROM action_logs a
    LEFT JOIN objects o ON o.id = a.object_id WHERE a.id = ${actionId}`);
  return rows[0] ?? null;
}
