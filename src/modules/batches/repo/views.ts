import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { COLUMNS, toRow, type BatchRow, type RawBatch } from './rows.js';

/**
 * What a sealed batch's public answers show of actions whose objects' visibility changed
 * since it sealed (docs/batches.md, "An object made private later"; ../views.ts): which of
 * its actions are on private objects now, and its published content's view.
 */

/** A batch and the ids of its actions whose object is private now, in execution order. */
export async function findBatchWithPrivateNow(
  exec: Executor,
  id: string,
): Promise<{ row: BatchRow; privateNow: string[] } | null> {
  const { rows } = await exec.execute<RawBatch & { private_now: string[] }>(sql`
    SELECT ${COLUMNS}, ARRAY(${privateNowOf(sql`b.id`)}) AS private_now
    FROM batches b WHERE b.id = ${id}`);
  const found = rows[0];
  if (found === undefined) return null;
  const { private_now, ...raw } = found;
  return { row: toRow(raw), privateNow: private_now };
}

/** The ids of a batch's actions whose object is private now, in execution order. */
export async function privateNowActions(exec: Executor, batchId: string): Promise<string[]> {
  const { rows } = await exec.execute<{ id: string }>(privateNowOf(sql`${batchId}`));
  return rows.map((r) => r.id);
}

/** The actions of the batch `batchId` names whose object is private now (objects.is_public). */
const privateNowOf = (batchId: ReturnType<typeof sql>) => sql`
  SELECT a.id FROM action_logs a JOIN objects o ON o.id = a.object_id
  WHERE a.batch_id = ${batchId} AND NOT o.is_public ORDER BY a.seq`;

/**
 * Publishes a sealed batch's content anew under `ipfsUrl`, in content `version`, showing
 * `hidden` (actions sealed public) as private; the CID it had joins `superseded_ipfs_urls`
 * (each CID once, the one it has now not among them). False when its content changed
 * meanwhile, or it waits to be re-published as version 3.
 */
export async function saveView(
  exec: Executor,
  id: string,
  v: { version: number; ipfsUrl: string; formerIpfsUrl: string; hidden: string[]; now: Date },
): Promise<boolean> {
  const { rowCount } = await exec.execute(sql`
    UPDATE batches SET version = ${v.version}, ipfs_url = ${v.ipfsUrl},
      hidden_actions = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(v.hidden)}::jsonb)),
      superseded_ipfs_urls = array_append(
        array_remove(array_remove(superseded_ipfs_urls, ${v.ipfsUrl}::text),
          ${v.formerIpfsUrl}::text),
        ${v.formerIpfsUrl}::text),
      updated_at = ${v.now}
    WHERE id = ${id} AND ipfs_url = ${v.formerIpfsUrl} AND NOT republish`);
  return (rowCount ?? 0) > 0;
}
