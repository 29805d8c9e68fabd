import { equalBytes, hashBytes, hex, sha256 } from './bytes.js';

/**
 * RFC 6962 Merkle trees (docs/batches.md): leaf = H(0x00 ‖ data), node = H(0x01 ‖ left ‖
 * right), the empty tree H(""). The same results as the service's src/lib/merkle.ts (a test
 * runs both on the same vectors); this copy runs in browsers.
 */

const LEAF = Uint8Array.of(0);
const NODE = Uint8Array.of(1);

export const leafHashOf = (data: Uint8Array): Uint8Array => sha256(LEAF, data);
const nodeHash = (l: Uint8Array, r: Uint8Array): Uint8Array => sha256(NODE, l, r);

/** MTH over raw leaf data, bottom-up (an unpaired last node is carried up unchanged). */
export function merkleRootOfData(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  let level = leaves.map(leafHashOf);
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

/** `0x` + hex of {@link merkleRootOfData}. */
export const merkleRoot = (leaves: readonly Uint8Array[]): string => hex(merkleRootOfData(leaves));

/** An RFC 6962 inclusion proof as `GET /batches/{id}/proofs/{actionId}` answers it. */
export interface InclusionProof {
  leaf_index: number;
  tree_size: number;
  audit_path: string[];
  leaf_hash: string;
  root: string;
}

/**
 * RFC 9162 §2.1.3.2: rebuilds the root from `leaf_hash` and the audit path and compares it
 * with `root`; `leafData`, when given, must hash to `leaf_hash`.
 */
export function verifyInclusion(proof: InclusionProof, leafData?: Uint8Array): boolean {
  const { leaf_index: index, tree_size: size } = proof;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    return false;
  }
  const leaf = hashBytes(proof.leaf_hash);
  const root = hashBytes(proof.root);
  if (!leaf || !root || !Array.isArray(proof.audit_path)) return false;
  if (leafData !== undefined && !equalBytes(leaf, leafHashOf(leafData))) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const node of proof.audit_path) {
    const p = hashBytes(node);
    if (!p || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, root);
}
