/**
 * The offline verifier (issue 18 item 6): re-checks what the service publishes without
 * trusting it. Browser-safe (WebCrypto, @noble/hashes, viem, multiformats); reading saved
 * files and the CLI are node-only (`./files.ts`, `../cli/ons-verify.ts`).
 */
export {
  actionTextOf,
  verifyActionSignature,
  type ActionContext,
  type PasskeyRules,
} from './actions.js';
export {
  commitmentOf,
  CONTENT_VERSIONS,
  GENESIS,
  HEADER_FIELDS,
  headerHash,
  integrityRootOf,
  ipfsUrlOf,
  privateCommitmentOf,
  verifyBatch,
  verifyPrivateAction,
  type BatchContext,
  type HistoryAction,
  type PrivateActionChecks,
} from './batches.js';
export { verifyActionInclusion } from './inclusion.js';
export { merkleRoot, merkleRootOfData, verifyInclusion, type InclusionProof } from './merkle.js';
export {
  geohash,
  objectHashes,
  verifyObjectChain,
  type ChainResult,
  type TemplateInfo,
  type TemplateOf,
} from './objects.js';
export { verifyNetwork, type VerifyOptions, type VerifyReport } from './run.js';
export { httpSource, type HttpSourceOptions, type Source } from './source.js';
export type {
  ActionRecord,
  BatchRecord,
  PrivateActionRecord,
  ProofRecord,
  PublicCredential,
  PublicObject,
  PublicTemplate,
  SignerLinks,
  TemplateVersion,
  Verdict,
} from './types.js';
export {
  passkeyRulesOf,
  publicActionContext,
  publicTemplates,
  type PublicActionOptions,
  type PublishedWebauthn,
} from './public-reads.js';
export { checkPins, type NetworkAnswer, type NetworkPins, type PinCheck } from './pins.js';
export {
  verifySealedBatch,
  type SealedBatchLine,
  type SealedBatchOptions,
  type SealedBatchReport,
} from './sealed-batch.js';
