import type { Executor } from '../../db/pool.js';
import { pageOf, parseList, type ListQuery, type Page } from '../../lib/list.js';
import {
  ACTION_LOG_LIST,
  adoptWaitingActions as adoptWaitingRows,
  moveActionsToBatch as moveActionRows,
  listActionLogs,
  listBatchActions,
  listBatchLeaves,
  listObjectActionLogs,
  type ActionLogFilters,
  type ActionLogRow,
  type BatchActionRow,
} from './repo/action-logs.js';
import type { ActionLogRecord } from './types.js';

export function toActionLogRecord(r: ActionLogRow): ActionLogRecord {
  return {
    id: r.id,
    hash: r.hash,
    name: r.name,
    wallet: r.wallet,
    organization_id: r.organization_id,
    signature_type: r.signature_type,
    signature: r.signature,
    nonce: r.nonce,
    params: r.params,
    expires: r.expires,
    object_id: r.object_id,
    template_id: r.template_id,
    template_version: r.template_version,
    fee_wei: r.fee_wei,
    batch_id: r.batch_id,
    ...(r.log_index !== undefined
      ? { log_index: r.log_index === null ? null : Number(r.log_index) }
      : {}),
    when_created: r.created_at.toISOString(),
  };
}

/**
 * One page of an organization's action log, sorted by creation (then id). The caller has
 * checked that the caller may read it; `q` holds the paging and when_created filters.
 */
export async function actionLogPage(
  exec: Executor,
  orgId: string,
  q: ListQuery,
  filters: Omit<ActionLogFilters, 'query'>,
): Promise<Page<ActionLogRecord>> {
  const p = parseList(q, ACTION_LOG_LIST);
  const rows = await listActionLogs(exec, orgId, p, { ...filters, query: q });
  const page = pageOf(
    rows,
    p,
    (r) => r.created_at,
    (r) => r.id,
  );
  return { ...page, items: page.items.map(toActionLogRecord) };
}

/**
 * One page of an object's action log whatever organization executed each action: the public
 * history of a public object (the caller has checked that it is public).
 */
export async function objectHistoryPage(
  exec: Executor,
  objectId: string,
  q: ListQuery,
): Promise<Page<ActionLogRecord>> {
  const p = parseList(q, ACTION_LOG_LIST);
  const rows = await listObjectActionLogs(exec, objectId, p, q);
  const page = pageOf(
    rows,
    p,
    (r) => r.created_at,
    (r) => r.id,
  );
  return { ...page, items: page.items.map(toActionLogRecord) };
}

/** A batch's actions as logged, in execution order, with the integrity hash each left. */
export async function batchActions(
  exec: Executor,
  batchId: string,
): Promise<{ record: ActionLogRecord; integrityHash: string; private: boolean }[]> {
  return (await listBatchActions(exec, batchId)).map(toBatchAction);
}

/**
 * A sealed batch's actions in execution order, `size` at a time, so that a reader holds one
 * page at once (a sealed batch's rows no longer change between the pages' statements).
 */
export async function* batchActionPages(
  exec: Executor,
  batchId: string,
  size: number,
): AsyncGenerator<{ record: ActionLogRecord; integrityHash: string; private: boolean }[]> {
  let afterSeq = -1;
  for (;;) {
    const rows = await listBatchActions(exec, batchId, { afterSeq, limit: size });
    if (rows.length > 0) yield rows.map(toBatchAction);
    if (rows.length < size) return;
    afterSeq = rows[rows.length - 1]!.seq;
  }
}

function toBatchAction({ integrity_hash, seq: _, private: isPrivate, ...r }: BatchActionRow) {
  return { record: toActionLogRecord(r), integrityHash: integrity_hash, private: isPrivate };
}

/** The id, hash and integrity hash of a batch's actions in execution order, and privacy. */
export const batchLeaves = listBatchLeaves;

/**
 * The batches feature numbers actions into batches (batches/repo/batches.ts); the event bus
 * owns `action_logs`, so it moves them: the actions of a restarted batch's follower join it,
 * and those logged while no batch could take them join the batch of their range.
 */
export function moveActionsToBatch(exec: Executor, fromId: string, toId: string): Promise<void> {
  return moveActionRows(exec, fromId, toId);
}

export function adoptWaitingActions(
  exec: Executor,
  id: string,
  seqStart: number,
  capacity: number,
): Promise<void> {
  return adoptWaitingRows(exec, id, seqStart, capacity);
}
