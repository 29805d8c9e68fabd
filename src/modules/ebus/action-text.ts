import { canonicalJson } from '../../lib/canonical-json.js';
import { base64url, sha256, sha256Hex } from '../../lib/hash.js';

export interface ActionTextInput {
  /** Network id from config (`GET /public/network` → `network`). */
  network: string;
  organizationId: string;
  /** The wallet's own address; lowercased in the text. */
  wallet: string;
  /** The wallet's next action number. */
  nonce: number | bigint;
  /** Action name, e.g. `transfer`. */
  name: string;
  /** Action params; written as RFC 8785 canonical JSON. */
  params: unknown;
  /** ISO 8601 UTC. A string is written verbatim (it is what the client signed). */
  expires: string | Date;
}

function singleLine(field: string, value: string): string {
  // A line break inside a field would let it forge the lines that follow.
  if (/[\r\n\u2028\u2029]/.test(value)) {
    throw new Error(`buildActionText: ${field} must not contain a line break`);
  }
  return value;
}

function nonceText(nonce: number | bigint): string {
  if (typeof nonce === 'bigint') {
    if (nonce < 0n) throw new Error('buildActionText: nonce must be a non-negative integer');
    return nonce.toString();
  }
  if (!Number.isSafeInteger(nonce) || nonce < 0) {
    throw new Error('buildActionText: nonce must be a non-negative integer');
  }
  return String(nonce);
}

/**
 * The text a wallet signs for an action (docs/ebus.md, "The text to sign"): eight lines joined by
 * `\n`, no trailing newline. Any client can rebuild it from the same inputs.
 */
export function buildActionText(input: ActionTextInput): string {
  const expires = typeof input.expires === 'string' ? input.expires : input.expires.toISOString();
  return [
    'ONS action v1',
    `network: ${singleLine('network', input.network)}`,
    `organization: ${singleLine('organizationId', input.organizationId)}`,
    `wallet: ${singleLine('wallet', input.wallet.toLowerCase())}`,
    `nonce: ${nonceText(input.nonce)}`,
    `action: ${singleLine('name', input.name)}`,
    `params: ${canonicalJson(input.params)}`,
    `expires: ${singleLine('expires', expires)}`,
  ].join('\n');
}

/** `0x` + hex SHA-256 of the UTF-8 action text: the action's hash. */
export function actionHash(text: string): string {
  return sha256Hex(text);
}

/** The WebAuthn challenge for an action: base64url (no padding) of SHA-256(text). */
export function webauthnChallenge(text: string): string {
  return base64url(sha256(text));
}
