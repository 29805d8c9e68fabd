/**
 * The transparency log's client side (issue 33): RFC 6962 proofs, C2SP signed notes,
 * checkpoints, cosignatures, tiles, and per-action receipts. Browser-safe (WebCrypto and
 * @noble/hashes); the witness and the monitor are node-only (`./witness.ts`,
 * `./monitor.ts`, run by `ons-verify`).
 */
export { fromBase64, toBase64 } from './base64.js';
export {
  COSIGNATURE_MAX_AHEAD_SECONDS,
  parseCheckpointBody,
  rootHex,
  verifyCheckpoint,
  type CheckedCheckpoint,
  type Checkpoint,
  type CheckpointOptions,
} from './checkpoint.js';
export { cosignedMessage, verifyCosignature, type Cosignature } from './cosignature.js';
export {
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  decodeNote,
  ed25519Verify,
  keyIdOf,
  NoteError,
  openNote,
  parseNote,
  parseVerifierKey,
  verifierKeyText,
  verifyNoteSignature,
  type Note,
  type NoteSignature,
  type OpenedNote,
  type VerifierKey,
} from './note.js';
export {
  verifyReceipt,
  type Receipt,
  type ReceiptResult,
  type VerifyReceiptOptions,
} from './receipt.js';
export {
  entriesPath,
  entryTilesFor,
  parseEntryBundle,
  TILE_WIDTH,
  tileIndexPath,
  tilePath,
} from './tiles.js';
export {
  appendLeaf,
  ceilLog2,
  emptyFrontier,
  frontierRoot,
  leafHash,
  nodeHash,
  rootFromInclusionProof,
  rootOfLeafHashes,
  verifyConsistencyProof,
  verifyInclusionProof,
  type Frontier,
} from './tree.js';
