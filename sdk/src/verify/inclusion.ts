import { hashBytes, hex } from './bytes.js';
import { privateCommitmentOf } from './commitment.js';
import { leafHashOf, verifyInclusion, type InclusionProof } from './merkle.js';
import { fail, pass, type BatchRecord, type Verdict } from './types.js';

/**
 * (d) Checks an action's inclusion proof (`GET /batches/{id}/proofs/{actionId}`) against
 * the batch's `actions_hash`: `root` is the batch's, `tree_size` is its `actions_count` (an
 * audit path for a smaller tree can lead to the same root from another position),
 * `leaf_hash` is H(0x00 ‖ the action's hash) and the audit path leads from it to the root
 * (RFC 9162 §2.1.3.2). An action its batch sealed private (content version 4) whose object is
 * public now comes with the `salt` of its commitment: the leaf is then H(0x00 ‖ commitment),
 * rebuilt from the salt, the action's hash and `integrityHash`, the integrity hash the
 * object's replayed history gives the action (without it, `leaf_hash` fails).
 */
export function verifyActionInclusion(
  action: { id: string; hash: string },
  proof: InclusionProof & { salt?: string },
  batch: Pick<BatchRecord, 'id' | 'actions_hash' | 'actions_count'>,
  integrityHash?: string,
): Verdict {
  const item = `proof ${action.id} in ${batch.id}`;
  if (proof.root !== batch.actions_hash) {
    return fail(item, 'root', "the proof's root is not the batch's actions_hash");
  }
  if (proof.tree_size !== batch.actions_count) {
    return fail(
      item,
      'tree_size',
      `the proof's tree_size ${String(proof.tree_size)} is not the batch's actions_count ${batch.actions_count}`,
    );
  }
  if (proof.salt !== undefined) {
    const commitment =
      integrityHash === undefined
        ? null
        : privateCommitmentOf(proof.salt, action.hash, integrityHash);
    const data = commitment === null ? null : hashBytes(commitment);
    if (!data || proof.leaf_hash !== hex(leafHashOf(data))) {
      return fail(
        item,
        'leaf_hash',
        "leaf_hash is not H(0x00 ‖ the commitment of the action's hash and integrity hash under its salt)",
      );
    }
  } else {
    const data = hashBytes(action.hash);
    if (!data || proof.leaf_hash !== hex(leafHashOf(data))) {
      return fail(item, 'leaf_hash', "leaf_hash is not H(0x00 ‖ the action's hash)");
    }
  }
  if (!verifyInclusion(proof)) {
    return fail(item, 'audit_path', 'the audit path does not lead to the root');
  }
  return pass(item);
}
