import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber } from '../../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
} from '../../../lib/list.js';
import type { ActionLogRecord } from '../types.js';

export type ActionLogRow = Omit<ActionLogRecord, 'when_created' | 'log_index'> & {
  created_at: Date;
  log_index?: number | string | null;
};

const withLogIndex = (r: ActionLogRow): ActionLogRow => ({
  ...r,
  nonce: asNumber(r.nonce),
  created_at: asDate(r.created_at),
  log_index: r.log_index === null || r.log_index === undefined ? null : asNumber(r.log_index),
});

/** The columns of an action log record, for every query that answers one. */
const ACTION_LOG_COLUMNS =
  sql.raw(`id, hash, name, wallet, organization_id, signature_type, signature, nonce,
  params, expires, object_id, template_id, template_version, fee_wei::text AS fee_wei, batch_id,
  created_at`);

/** An action log record's place in the transparency log (the log module's table, read only). */
const LOG_INDEX =
  sql.raw(`(SELECT e.log_index FROM log_entries e WHERE e.action_id = action_logs.id)
  AS log_index`);

export const ACTION_LOG_LIST: ListSpec = {
  sortable: { when_created: { column: sql`created_at`, type: 'timestamp' as const } },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

export interface ActionLogFilters {
  id?: string;
  wallet?: string;
  object_id?: string;
  name?: string;
  hash?: string;
  query: Record<string, unknown>;
}

/** One page of the organization's action log (docs/api.md, "Lists"). */
export async function listActionLogs(
  exec: Executor,
  orgId: string,
  p: ParsedList,
  f: ActionLogFilters,
): Promise<ActionLogRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.wallet !== undefined ? sql`wallet = ${f.wallet.toLowerCase()}` : undefined,
    f.object_id !== undefined ? sql`object_id = ${f.object_id}` : undefined,
    f.name !== undefined ? sql`name = ${f.name}` : undefined,
    f.hash !== undefined ? sql`hash = ${f.hash.toLowerCase()}` : undefined,
    keysetCondition(p),
    ...dateFilters(f.query, sql`created_at`),
  ]);
  const { rows } = await exec.execute<ActionLogRow>(sql`
    SELECT ${ACTION_LOG_COLUMNS}, ${LOG_INDEX} FROM action_logs WHERE ${where} ${orderBy(p)}
    LIMIT ${p.limit + 1}`);
  return rows.map(withLogIndex);
}

/**
 * One page of an object's action log across every organization that acted on it (the public
 * history of a public object; the caller has checked that the object is public).
 */
export async function listObjectActionLogs(
  exec: Executor,
  objectId: string,
  p: ParsedList,
  query: Record<string, unknown>,
): Promise<ActionLogRow[]> {
  const where = and([
    sql`object_id = ${objectId}`,
    keysetCondition(p),
    ...dateFilters(query, sql`created_at`),
  ]);
  const { rows } = await exec.execute<ActionLogRow>(sql`
    SELECT ${ACTION_LOG_COLUMNS}, ${LOG_INDEX} FROM action_logs WHERE ${where} ${orderBy(p)}
    LIMIT ${p.limit + 1}`);
  return rows.map(withLogIndex);
}

/**
 * `private`: the action's object is private now (a batch's header freezes what it sealed as
 * private: docs/batches.md, "What is public").
 */
export type BatchActionRow = ActionLogRow & {
  integrity_hash: string;
  seq: number;
  private: boolean;
};

/** Whether the action's object is private (false for an action on no object). */
const IS_PRIVATE = sql.raw(`NOT coalesce((SELECT o.is_public FROM objects o
  WHERE o.id = action_logs.object_id), true) AS private`);

/**
 * A batch's actions in execution order, each with the object integrity hash it left; with
 * `page`, the first `limit` of those numbered after `afterSeq`.
 */
export async function listBatchActions(
  exec: Executor,
  batchId: string,
  page?: { afterSeq: number; limit: number },
): Promise<BatchActionRow[]> {
  const { rows } = await exec.execute<BatchActionRow>(sql`
    SELECT ${ACTION_LOG_COLUMNS}, integrity_hash, seq, ${IS_PRIVATE} FROM action_logs
    WHERE batch_id = ${batchId} ${page ? sql`AND seq > ${page.afterSeq}` : sql``}
    ORDER BY seq ${page ? sql`LIMIT ${page.limit}` : sql``}`);
  return rows.map((r) => ({
    ...r,
    nonce: asNumber(r.nonce),
    seq: asNumber(r.seq),
    created_at: asDate(r.created_at),
  }));
}

/** What an action's leaf in its batch's `actions_hash` is made from. */
export type BatchLeafRow = {
  id: string;
  hash: string;
  integrity_hash: string;
  object_id: string | null;
  organization_id: string;
  private: boolean;
};

/**
 * The id, hash and integrity hash of a batch's actions in execution order (what the leaves
 * of its tree are made from), with whether each one's object is private now.
 */
export async function listBatchLeaves(exec: Executor, batchId: string): Promise<BatchLeafRow[]> {
  const { rows } = await exec.execute<BatchLeafRow>(sql`
    SELECT id, hash, integrity_hash, object_id, organization_id, ${IS_PRIVATE} FROM action_logs
    WHERE batch_id = ${batchId} ORDER BY seq`);
  return rows;
}

/** The actions that joined batch `fromId` join batch `toId` instead (a batch restarted). */
export async function moveActionsToBatch(exec: Executor, fromId: string, toId: string) {
  await exec.execute(sql`UPDATE action_logs SET batch_id = ${toId} WHERE batch_id = ${fromId}`);
}

/** The actions of a batch's range logged while no batch could take them join it. */
export async function adoptWaitingActions(
  exec: Executor,
  id: string,
  seqStart: number,
  capacity: number,
) {
  await exec.execute(sql`
    UPDATE action_logs SET batch_id = ${id}
    WHERE batch_id IS NULL AND seq >= ${seqStart} AND seq < ${seqStart + capacity}`);
}
