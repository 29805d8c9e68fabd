import { base64url, sha256, toHex } from '../encoding.js';
import { canonicalJson } from './canonical-json.js';

/** Everything the text of an action is made of (docs/ebus.md, "The text to sign"). */
export interface ActionTextInput {
  /** The network id (`GET /public/network` → `network`). */
  network: string;
  organizationId: string;
  /** The wallet's own address; written lowercase. */
  wallet: string;
  /** The wallet's next action number (`GET /ebus/nonce`). */
  nonce: number | bigint;
  /** The action's name, e.g. `transfer`. */
  name: string;
  /** The action's params; written as RFC 8785 canonical JSON. */
  params: unknown;
  /** When the signature stops being valid: an ISO 8601 UTC string, sent exactly as signed. */
  expires: string | Date;
}

function oneLine(field: string, value: string): string {
  // A line break inside a field could forge the lines after it.
  if (/[\r\n\u2028\u2029]/.test(value)) throw new Error(`action text: ${field} has a line break`);
  return value;
}

function nonceText(nonce: number | bigint): string {
  const ok = typeof nonce === 'bigint' ? nonce >= 0n : Number.isSafeInteger(nonce) && nonce >= 0;
  if (!ok) throw new Error('action text: nonce must be a non-negative integer');
  return nonce.toString();
}

/**
 * The text a wallet signs for an action: eight lines joined by `\n`, no newline at the end;
 * byte for byte what `POST /ebus/prepare` answers for the same inputs.
 *
 * ```
 * ONS action v1
 * network: <network id>
 * organization: <organization id>
 * wallet: <lowercase 0x address>
 * nonce: <integer>
 * action: <name>
 * params: <RFC 8785 canonical JSON of params>
 * expires: <ISO 8601 UTC>
 * ```
 */
export function buildActionText(input: ActionTextInput): string {
  const expires = typeof input.expires === 'string' ? input.expires : input.expires.toISOString();
  return [
    'ONS action v1',
    `network: ${oneLine('network', input.network)}`,
    `organization: ${oneLine('organizationId', input.organizationId)}`,
    `wallet: ${oneLine('wallet', input.wallet.toLowerCase())}`,
    `nonce: ${nonceText(input.nonce)}`,
    `action: ${oneLine('name', input.name)}`,
    `params: ${canonicalJson(input.params)}`,
    `expires: ${oneLine('expires', expires)}`,
  ].join('\n');
}

/** The action's hash: `0x` + hex SHA-256 of the UTF-8 text. */
export async function actionHash(text: string): Promise<string> {
  return `0x${toHex(await sha256(text))}`;
}

/** The WebAuthn challenge a passkey signs for an action: base64url(SHA-256(text)). */
export async function webauthnChallenge(text: string): Promise<string> {
  return base64url(await sha256(text));
}
