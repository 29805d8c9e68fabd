import type { AppError } from '../../lib/errors.js';
import type { Role } from '../../lib/permissions.js';
import type { ObjectRecord } from '../objects/index.js';
import type { ActionName } from '../objects/index.js';
import type { SignatureBody } from './schema.js';

/** The signed fields of an action, params as a plain record. */
export interface ActionData {
  wallet: string;
  name: ActionName;
  params: Record<string, unknown>;
  nonce: number;
  expires: string;
}

/**
 * The removable credential behind a signature: a linked EOA or a passkey. The EOA that is
 * the wallet's own address is never removed and is not named.
 */
export interface SigningCredential {
  type: 'eoa' | 'passkey';
  /** Lowercase 0x address, or the passkey's credential id (base64url). */
  externalId: string;
}

/** An action whose schema, expiry and signature have been checked (outside any transaction). */
export interface VerifiedAction {
  /** The caller's organization: it pays the fee and owns the log row. */
  payerOrgId: string;
  walletId: string;
  /** The API key that submitted it (null: a person's session); spend policies may bind it. */
  apiKeyId: string | null;
  /** Lowercase 0x address of the signer wallet. */
  walletAddress: string;
  /** The signer's role in the payer organization (an active member). */
  signerRole: Role;
  action: ActionData;
  text: string;
  hash: string;
  signature: SignatureBody;
  /** For a passkey signature: the credential row and its new sign count. */
  passkey: { credentialId: string; newSignCount: number } | null;
  /** Checked again where the action is applied: its removal since verification refuses it. */
  credential: SigningCredential | null;
  maxFeeWei: bigint | null;
}

/** A passkey assertion as the action log publishes it (each part base64url as sent). */
export interface LoggedAssertion {
  credential_id: string;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
}

/**
 * The action log record (docs/ebus.md, "The action log record"): with `signature` and
 * `expires` anyone can rebuild the signed text ("The text to sign") and check it.
 */
export interface ActionLogRecord {
  id: string;
  hash: string;
  name: string;
  wallet: string;
  /** The organization the action was executed in: the text's `organization:` line. */
  organization_id: string;
  signature_type: 'eoa' | 'webauthn';
  /** The 0x hex signature (eoa) or the passkey assertion (webauthn). */
  signature: string | LoggedAssertion;
  nonce: number;
  params: Record<string, unknown>;
  /** As signed; null only for actions logged before it was stored. */
  expires: string | null;
  object_id: string | null;
  template_id: string | null;
  /**
   * The template version the action was applied with (`GET /public/templates/{id}/versions/
   * {version}`); null for actions logged before versions were kept.
   */
  template_version: number | null;
  fee_wei: string;
  batch_id: string | null;
  /** Its place in the transparency log (docs/log.md): null until its batch is in it. */
  log_index?: number | null;
  when_created: string;
}

/** What an applied action hands to the hooks and answers to the client. */
export interface AppliedAction {
  organizationId: string;
  log: ActionLogRecord;
  object: ObjectRecord;
}

export type ApplyOutcome = { ok: true; applied: AppliedAction } | { ok: false; error: AppError };
