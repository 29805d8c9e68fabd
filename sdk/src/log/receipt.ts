import { hashBytes, hex, sha256, utf8 } from '../verify/bytes.js';
import { actionTextOf } from '../verify/actions.js';
import { privateCommitmentOf } from '../verify/batches.js';
import type { ActionRecord } from '../verify/types.js';
import { verifyCheckpoint, type Checkpoint, type CheckpointOptions } from './checkpoint.js';
import type { Cosignature } from './cosignature.js';
import { ceilLog2, leafHash, verifyInclusionProof } from './tree.js';

/**
 * A per-action receipt (`GET /ebus/action-logs/{id}/receipt`): the action log record, its
 * place in the log, an inclusion proof to a signed checkpoint and that checkpoint with its
 * cosignatures. Self-contained: checking it needs only the log's public key.
 */
export interface Receipt {
  version: 1;
  /** `GET /public/network` → `network`: the action text names it, so its hash does. */
  network?: string;
  action: ActionRecord & { log_index?: number | null };
  log_index: number;
  tree_size: number;
  inclusion_proof: string[];
  checkpoint: string;
  /** `0x` H(0x00 ‖ leaf data), when served (checked when present). */
  leaf_hash?: string;
  /**
   * A private action sealed in a content-version-4 batch: its leaf is the salted commitment,
   * not the action hash (so the log publishes no private action hash). `salt` and
   * `integrity_hash` open the commitment; only the action's organization gets them.
   */
  private?: { leaf: string; salt?: string; integrity_hash?: string };
}

export interface VerifyReceiptOptions extends CheckpointOptions {
  /** The network id, when the receipt does not carry it (overrides the receipt's). */
  network?: string;
}

export interface ReceiptResult {
  /**
   * The record is in the log: every check passed and none was skipped. A skipped check leaves
   * a gap between the record and the leaf the proof proves (a record's fields untied to its
   * hash, or an action untied to a private leaf), so `ok` is false then even with no error:
   * anyone could put another record beside a genuine proof.
   */
  ok: boolean;
  /** What failed, each `<check>: <words>` (check: version, hash, leaf, inclusion, signature, …). */
  errors: string[];
  /**
   * Checks that could not be made (`hash` without a network id, `commitment` without the
   * salt). With no `errors`, only the leaf (the action hash or the commitment) is proven to be
   * in the log, not the record.
   */
  skipped: string[];
  checkpoint: Checkpoint | null;
  /** The witnesses whose cosignature verified. */
  cosignatures: Cosignature[];
}

/**
 * Checks a receipt offline: the action's hash is SHA-256 of the text rebuilt from the record
 * (as the batch verifier does), a private action's commitment opens to it (when the salt is
 * there), the inclusion proof leads from H(0x00 ‖ the hash, or the commitment) at
 * `log_index` to the checkpoint's root at `tree_size`, and the checkpoint is signed by
 * `logKey` (and cosigned as `witnessKeys`/`minCosignatures` ask). `ok` only when all of these
 * were checked and held (a skipped check is not a pass). Never throws.
 */
export async function verifyReceipt(
  receipt: Receipt,
  options: VerifyReceiptOptions,
): Promise<ReceiptResult> {
  const errors: string[] = [];
  const skipped: string[] = [];
  const r = receipt as Partial<Receipt> | null;
  const result = (checkpoint: Checkpoint | null = null, cosignatures: Cosignature[] = []) => ({
    ok: errors.length === 0 && skipped.length === 0,
    errors,
    skipped,
    checkpoint,
    cosignatures,
  });
  if (typeof r !== 'object' || r === null || r.version !== 1) {
    errors.push('version: not a version 1 receipt');
    return result();
  }
  const action = r.action;
  const actionHash = hashBytes(action?.hash);
  if (!action || !actionHash) {
    errors.push('action: no action record with a 0x hash');
    return result();
  }
  const network = options.network ?? r.network;
  if (network === undefined) {
    skipped.push('hash');
  } else {
    let text: string | null = null;
    try {
      text = actionTextOf(action, network);
    } catch (err) {
      errors.push(`hash: ${(err as Error).message}`);
    }
    if (text !== null && hex(sha256(utf8(text))) !== action.hash) {
      errors.push('hash: the hash is not SHA-256 of the text rebuilt from the record');
    }
  }
  let leafData = actionHash;
  if (r.private !== undefined) {
    const p = r.private as Partial<NonNullable<Receipt['private']>> | null;
    const leaf = hashBytes(p?.leaf);
    if (!p || !leaf) {
      errors.push('commitment: the private leaf is not a 0x hash');
      return result();
    }
    leafData = leaf;
    if (p.salt === undefined || p.integrity_hash === undefined) {
      skipped.push('commitment');
    } else if (privateCommitmentOf(p.salt, action.hash, p.integrity_hash) !== p.leaf) {
      errors.push('commitment: the leaf does not open to the action with its salt');
    }
  }
  const leafHashOf = leafHash(leafData);
  if (r.leaf_hash !== undefined && r.leaf_hash !== hex(leafHashOf)) {
    errors.push('leaf: leaf_hash is not H(0x00 ‖ the leaf)');
  }
  const checked = await verifyCheckpoint(String(r.checkpoint), options);
  errors.push(...checked.errors);
  const cp = checked.checkpoint;
  const index = r.log_index;
  const size = r.tree_size;
  if (typeof index !== 'number' || typeof size !== 'number') {
    errors.push('inclusion: no log_index or tree_size');
    return result(cp, checked.cosignatures);
  }
  if (action.log_index !== undefined && action.log_index !== index) {
    errors.push("leaf: the receipt's log_index is not the record's");
  }
  if (cp && cp.size !== size) errors.push("inclusion: tree_size is not the checkpoint's size");
  const proof = Array.isArray(r.inclusion_proof) ? r.inclusion_proof.map(hashBytes) : [null];
  if (proof.some((p) => p === null)) {
    errors.push('inclusion: the proof is not a list of 0x hashes');
  } else if (proof.length > ceilLog2(size)) {
    errors.push('inclusion: the proof is longer than ⌈log₂ tree_size⌉');
  } else if (cp && !verifyInclusionProof(index, size, leafHashOf, proof as Uint8Array[], cp.root)) {
    errors.push("inclusion: the proof does not lead to the checkpoint's root");
  }
  return result(cp, checked.cosignatures);
}
