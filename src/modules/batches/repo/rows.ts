import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, asNumber, type DbTime } from '../../../db/values.js';
import type { BatchProof } from '../prover.js';

/** A batch row as the repos read it (repo/batches.ts, repo/sealed.ts). */
export type BatchStatus = 'building' | 'proving' | 'proven' | 'finalized' | 'failed';

/**
 * An action as a batch's explorer record lists it; for a private one (`private`), `name` is
 * "" and `hash` its `actions_hash` leaf (docs/batches.md, "What is public").
 */
export type AffectedAction = {
  id: string;
  hash: string;
  name: string;
  alias: string;
  private: boolean;
};

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
  /** The actions its header sealed as private (migration 0021); null before its header. */
  private_actions: string[] | null;
  /**
   * The actions it sealed public whose objects were private when its content was last
   * published (migration 0040): its content shows them as private (views.ts). In execution
   * order.
   */
  hidden_actions: string[];
  /** The CIDs its content had before, each once, in the order they were last replaced. */
  superseded_ipfs_urls: string[];
  /** Its published content still shows private actions: the sealer re-publishes it. */
  republish: boolean;
  /** The transparency log's size after its actions (migration 0027); null until appended. */
  log_tree_size: number | null;
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

export type RawBatch = Omit<
  BatchRow,
  | 'sequence'
  | 'seq_start'
  | 'log_tree_size'
  | 'next_attempt_at'
  | 'sealed_at'
  | 'challenge_window_end'
  | 'completed_at'
  | 'created_at'
  | 'updated_at'
> & {
  sequence: number | string;
  seq_start: number | string;
  log_tree_size: number | string | null;
  next_attempt_at: DbTime | null;
  sealed_at: DbTime | null;
  challenge_window_end: DbTime | null;
  completed_at: DbTime | null;
  created_at: DbTime;
  updated_at: DbTime;
};

export const COLUMNS =
  sql.raw(`id, sequence, status, seq_start, capacity, next_id, next_capacity, version, hash, prev_hash,
  integrity_root, prev_integrity_root, actions_hash, commitment, actions_count,
  total_fee_wei::text AS total_fee_wei, ipfs_url, private_actions, hidden_actions,
  superseded_ipfs_urls,
  republish, log_tree_size, proof, proof_id, error,
  sender, l2_tx_hash, l2_finalization_tx_hash, attempts, next_attempt_at, sealed_at,
  challenge_window_end, completed_at, created_at, updated_at`);

export const maybeDate = (v: DbTime | null): Date | null => (v === null ? null : asDate(v));

export function toRow(r: RawBatch): BatchRow {
  return {
    ...r,
    sequence: asNumber(r.sequence),
    seq_start: asNumber(r.seq_start),
    log_tree_size: r.log_tree_size === null ? null : asNumber(r.log_tree_size),
    next_attempt_at: maybeDate(r.next_attempt_at),
    sealed_at: maybeDate(r.sealed_at),
    challenge_window_end: maybeDate(r.challenge_window_end),
    completed_at: maybeDate(r.completed_at),
    created_at: asDate(r.created_at),
    updated_at: asDate(r.updated_at),
  };
}

export async function rowsOf(exec: Executor, query: ReturnType<typeof sql>): Promise<BatchRow[]> {
  const { rows } = await exec.execute<RawBatch>(query);
  return rows.map(toRow);
}
