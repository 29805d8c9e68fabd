import type { Answer } from '../types.js';

/** The service's answers the verifier reads, named after their routes. */
export type ActionRecord = Answer<'/public/objects/{id}/history', 'get'>['action_logs'][number];
export type PublicCredential = Answer<'/public/credentials/{credentialId}', 'get'>;
export type BatchRecord = Answer<'/batches/{batchId}', 'get'>;
export type ProofRecord = Answer<'/batches/{batchId}/proofs/{actionId}', 'get'>;
export type PublicObject = Answer<'/public/objects', 'get'>['objects'][number];
export type PublicTemplate = Answer<'/public/templates/{id}', 'get'>;
export type TemplateVersion = Answer<'/public/templates/{id}/versions/{version}', 'get'>;
export type SignerLinks = Answer<'/public/wallets/{address}/signers/{signer}', 'get'>;
/** What a member of its organization reads of an action in a batch, private or not. */
export type PrivateActionRecord = Answer<'/batches/{batchId}/private-actions/{actionId}', 'get'>;

/**
 * One verdict: `item` names what was checked (`action act_…`, `object obj_…`, `batch 3`),
 * `ok` whether it holds, `failed` the first check that did not (e.g. `signature`, `hash`,
 * `integrity_hash`, `actions_hash`, `audit_path`) and `reason` says it in words. `skipped`
 * lists checks that public data cannot make (`ok` is then about the rest).
 */
export interface Verdict {
  item: string;
  ok: boolean;
  failed?: string;
  reason?: string;
  skipped?: string[];
}

export const pass = (item: string, skipped?: string[]): Verdict =>
  skipped && skipped.length > 0 ? { item, ok: true, skipped } : { item, ok: true };
export const fail = (item: string, failed: string, reason: string): Verdict => ({
  item,
  ok: false,
  failed,
  reason,
});
