import { hashBytes, hex, sha256, utf8 } from './bytes.js';

/**
 * A private action's commitment (content version 4) = H("ons private action v1" ‖ 0x00 ‖
 * salt ‖ action hash ‖ the integrity hash it left), or null when an input is not a hash.
 * A member of its organization has the three from
 * `GET /batches/{batchId}/private-actions/{actionId}`; the public has only the result, and
 * the salt of an action whose object was made public since (its inclusion proof's `salt`).
 */
export function privateCommitmentOf(
  salt: string,
  actionHash: string,
  integrityHash: string,
): string | null {
  const parts = [salt, actionHash, integrityHash].map(hashBytes);
  if (parts.some((p) => p === null)) return null;
  return hex(sha256(utf8('ons private action v1\u0000'), ...(parts as Uint8Array[])));
}
