import type { ActionLogRecord } from '../ebus/index.js';
import type { BatchHeader } from './formulas.js';
import type { BatchRow } from './repo/batches.js';

/**
 * An action log record as batch content carries it (design.md §6): the fields of the record
 * when batches began (content `version` 1), named here so that a field the API adds later
 * does not change the content, and so the CID, of a batch sealed before.
 */
export function contentRecord(r: ActionLogRecord) {
  return {
    id: r.id,
    hash: r.hash,
    name: r.name,
    wallet: r.wallet,
    signature_type: r.signature_type,
    signature: r.signature,
    nonce: r.nonce,
    params: r.params,
    expires: r.expires,
    object_id: r.object_id,
    template_id: r.template_id,
    fee_wei: r.fee_wei,
    batch_id: r.batch_id,
    when_created: r.when_created,
  };
}

/** The header of a batch whose header is written (`hash` set), from its row. */
export function headerOfRow(r: BatchRow): BatchHeader {
  return {
    id: r.id,
    sequence: r.sequence,
    prev_hash: r.prev_hash!,
    prev_integrity_root: r.prev_integrity_root!,
    integrity_root: r.integrity_root!,
    actions_hash: r.actions_hash!,
    commitment: r.commitment!,
    actions_count: r.actions_count,
    total_fee_wei: r.total_fee_wei,
    when_created: r.created_at.toISOString(),
  };
}
