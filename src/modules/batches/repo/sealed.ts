import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import type { BatchHeader } from '../formulas.js';
import type { BatchProof } from '../prover.js';
import { COLUMNS, rowsOf, type BatchRow } from './rows.js';

/** The sealed batch's steps after the close: header and proof, anchoring, finality. */

// --- Proving -----------------------------------------------------------------------------

/**
 * Whether a sealed batch waits for its header and proof now (a cheap look, no lock): one
 * sealed by `restedBy` (BATCH_PROVE_DELAY_MS) whose retry, if any, is due.
 */
export async function hasProvingWork(exec: Executor, now: Date, restedBy: Date) {
  const { rows } = await exec.execute<{ any: boolean }>(sql`
    SELECT EXISTS (SELECT 1 FROM batches WHERE status = 'proving' AND ${rested(restedBy)}
      AND (next_attempt_at IS NULL OR next_attempt_at <= ${now})) AS any`);
  return rows[0]!.any;
}

/**
 * Sealed batches whose header is not written yet and that were sealed by `restedBy`, in chain
 * order (batches seal in that order, so the younger ones left out come after these).
 */
export async function unprovenBatches(exec: Executor, restedBy: Date): Promise<BatchRow[]> {
  return rowsOf(
    exec,
    sql`SELECT ${COLUMNS} FROM batches WHERE status = 'proving' AND ${rested(restedBy)}
      ORDER BY sequence`,
  );
}

const rested = (by: Date) => sql`(sealed_at IS NULL OR sealed_at <= ${by})`;

export async function findBySequence(exec: Executor, sequence: number): Promise<BatchRow | null> {
  const rows = await rowsOf(exec, sql`SELECT ${COLUMNS} FROM batches WHERE sequence = ${sequence}`);
  return rows[0] ?? null;
}

/** A sealed batch's header (docs/batches.md, "The formulas") with its hash and content CID. */
export type SealedHeader = Omit<BatchHeader, 'id' | 'sequence' | 'when_created'> & {
  hash: string;
  ipfs_url: string;
  /** The actions sealed as private, in execution order. */
  private_actions: string[];
};

/**
 * Writes a sealed batch's header (it stays `proving` until its proof). A batch of content
 * version 1 or 2 (set by hand: new batches are 4) that holds private actions is flagged to
 * be re-published as version 3 at once.
 */
export async function saveHeader(
  exec: Executor,
  id: string,
  h: SealedHeader,
  now: Date,
  version: number,
) {
  const republish = version < 3 && h.private_actions.length > 0;
  await exec.execute(sql`
    UPDATE batches SET hash = ${h.hash}, prev_hash = ${h.prev_hash},
      integrity_root = ${h.integrity_root}, prev_integrity_root = ${h.prev_integrity_root},
      actions_hash = ${h.actions_hash}, commitment = ${h.commitment},
      actions_count = ${h.actions_count}, total_fee_wei = ${h.total_fee_wei}::numeric,
      ipfs_url = ${h.ipfs_url}, private_actions =
        ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(h.private_actions)}::jsonb)),
      republish = ${republish},
      updated_at = ${now}
    WHERE id = ${id} AND status = 'proving'`);
}

/** Writes a batch's proof: it is `proven`. False when it was not `proving` any more. */
export async function saveProof(
  exec: Executor,
  id: string,
  proof: BatchProof,
  proofId: string,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await exec.execute(sql`
    UPDATE batches SET status = 'proven', proof = ${JSON.stringify(proof)}::jsonb,
      proof_id = ${proofId}, error = NULL, attempts = 0, next_attempt_at = NULL,
      updated_at = ${now}
    WHERE id = ${id} AND status = 'proving'`);
  return (rowCount ?? 0) > 0;
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

// --- Re-publishing ------------------------------------------------------------------------

/**
 * The oldest sealed batch whose published content (version 1 or 2) still shows private
 * actions.
 */
export async function nextToRepublish(exec: Executor): Promise<BatchRow | null> {
  const rows = await rowsOf(
    exec,
    sql`SELECT ${COLUMNS} FROM batches WHERE republish AND version < 3 ORDER BY sequence LIMIT 1`,
  );
  return rows[0] ?? null;
}

/**
 * Re-publishes a sealed batch's content as `version` under `ipfsUrl`, showing `hidden`
 * (actions sealed public, their objects private now) as private too; the CID it had joins
 * `superseded_ipfs_urls`. False when it was re-published meanwhile.
 */
export async function saveRepublished(
  exec: Executor,
  id: string,
  r: { version: number; ipfsUrl: string; formerIpfsUrl: string; hidden: string[]; now: Date },
): Promise<boolean> {
  const { rowCount } = await exec.execute(sql`
    UPDATE batches SET version = ${r.version}, ipfs_url = ${r.ipfsUrl},
      hidden_actions = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(r.hidden)}::jsonb)),
      superseded_ipfs_urls = array_append(superseded_ipfs_urls, ${r.formerIpfsUrl}::text),
      republish = false, updated_at = ${r.now}
    WHERE id = ${id} AND republish AND ipfs_url = ${r.formerIpfsUrl}`);
  return (rowCount ?? 0) > 0;
}

/** The transparency log's size once this batch's actions are in it (log/service.ts). */
export async function setLogTreeSize(exec: Executor, batchId: string, size: number) {
  await exec.execute(sql`UPDATE batches SET log_tree_size = ${size} WHERE id = ${batchId}`);
}
