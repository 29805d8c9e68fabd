import { recoverMessageAddress } from 'viem';
import { buildActionText } from '../actions/text.js';
import { base64url } from '../encoding.js';
import { buf, concat, fromBase64url, hex, sha256, utf8 } from './bytes.js';
import {
  fail,
  pass,
  type ActionRecord,
  type PublicCredential,
  type SignerLinks,
  type Verdict,
} from './types.js';

/** What checking an action needs besides its record. */
export interface ActionContext {
  /** `GET /public/network` → `network`. */
  network: string;
  /** `GET /public/credentials/{credentialId}`; null (or a throw) when the service has none. */
  credential(credentialId: string): Promise<PublicCredential | null>;
  /**
   * `GET /public/wallets/{address}/signers/{signer}`: when the EOA `signer` was linked to the
   * wallet; null (or a throw) when it never was. Without it, an EOA signature must recover
   * the wallet's own address.
   */
  signerLinks?(wallet: string, signer: string): Promise<SignerLinks | null>;
  /**
   * What a passkey assertion must name: `GET /public/network` → `webauthn` (the service's
   * `WEBAUTHN_RP_ID` and `WEBAUTHN_ORIGINS`) and any the verifier adds. Null, or an empty
   * list, leaves that check out and the verdict says so (`skipped: ['rp_id']`, `['origin']`).
   */
  passkeyRules?(): Promise<PasskeyRules | null>;
}

/** The RP ids and origins a passkey assertion may name (docs/ebus.md, "Signature bodies"). */
export interface PasskeyRules {
  /** SHA-256 of one of them must be the assertion's `rpIdHash`. */
  rpIds: readonly string[];
  /** The assertion's `clientDataJSON.origin` must be one of them. */
  origins: readonly string[];
}

/** Whether the action was signed while one of the EOA's links to its wallet held. */
function linkedAt(links: SignerLinks, when: string): boolean {
  const t = Date.parse(when);
  return links.links.some(
    (l) =>
      Date.parse(l.when_linked) <= t && (l.when_unlinked === '' || t < Date.parse(l.when_unlinked)),
  );
}

/**
 * The text the action's signer signed (docs/ebus.md, "The text to sign"), rebuilt from its record
 * alone.
 */
export function actionTextOf(record: ActionRecord, network: string): string {
  if (record.expires === null)
    throw new Error('the record has no expires (logged before it was kept)');
  return buildActionText({
    network,
    organizationId: record.organization_id,
    wallet: record.wallet,
    nonce: record.nonce,
    name: record.name,
    params: record.params,
    expires: record.expires,
  });
}

/**
 * (a) Checks one action log record: its `hash` is SHA-256 of the rebuilt text, and its
 * signature is the wallet's over that text. EOA: the address viem recovers must be the
 * wallet's, or an EOA linked to the wallet when the action was made (`when_created` within
 * one of the link's spans, `ctx.signerLinks`). Passkey: the published key of
 * `signature.credential_id` must belong to the wallet and verify the WebAuthn assertion as the
 * service checked it (src/lib/crypto/webauthn-assertion.ts): clientDataJSON `type`
 * `webauthn.get` (`type`), challenge = base64url(SHA-256(text)) (`challenge`), an origin of
 * `ctx.passkeyRules` and not cross-origin (`origin`), `rpIdHash` = SHA-256 of one of its RP
 * ids (`rp_id`), UP and UV set, signature over authenticatorData ‖ SHA-256(clientDataJSON).
 */
export async function verifyActionSignature(
  record: ActionRecord,
  ctx: ActionContext,
): Promise<Verdict> {
  const item = `action ${record.id}`;
  let text: string;
  try {
    text = actionTextOf(record, ctx.network);
  } catch (err) {
    return fail(item, 'text', (err as Error).message);
  }
  if (hex(sha256(utf8(text))) !== record.hash) {
    return fail(item, 'hash', 'the hash is not SHA-256 of the text rebuilt from the record');
  }
  const wallet = record.wallet.toLowerCase();
  if (record.signature_type === 'eoa') {
    if (typeof record.signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(record.signature)) {
      return fail(item, 'signature', 'not a 65-byte 0x hex signature');
    }
    let signer: string;
    try {
      signer = (
        await recoverMessageAddress({ message: text, signature: record.signature as `0x${string}` })
      ).toLowerCase();
    } catch {
      return fail(item, 'signature', 'no address can be recovered from the signature');
    }
    if (signer === wallet) return pass(item);
    let links: SignerLinks | null;
    try {
      links = (await ctx.signerLinks?.(wallet, signer)) ?? null;
    } catch {
      links = null;
    }
    if (links === null || links.wallet !== wallet || links.signer !== signer) {
      return fail(
        item,
        'signature',
        `the signature recovers ${signer}, which is neither the wallet ${wallet} nor an EOA linked to it`,
      );
    }
    if (!linkedAt(links, record.when_created)) {
      return fail(
        item,
        'signature',
        `the signature recovers ${signer}, which was not linked to the wallet ${wallet} at ${record.when_created}`,
      );
    }
    return pass(item);
  }
  return verifyPasskey(item, record, text, wallet, ctx);
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;

async function verifyPasskey(
  item: string,
  record: ActionRecord,
  text: string,
  wallet: string,
  ctx: ActionContext,
): Promise<Verdict> {
  const a = record.signature;
  if (typeof a !== 'object' || a === null) return fail(item, 'signature', 'no passkey assertion');
  const authData = fromBase64url(a.authenticator_data);
  const clientData = fromBase64url(a.client_data_json);
  const signature = fromBase64url(a.signature);
  if (!authData || !clientData || !signature || authData.length < 37) {
    return fail(item, 'signature', 'the assertion parts are not base64url');
  }
  let key: PublicCredential | null;
  try {
    key = await ctx.credential(a.credential_id);
  } catch {
    key = null;
  }
  if (key === null) return fail(item, 'credential', `no public key for ${a.credential_id}`);
  if (key.wallet.toLowerCase() !== wallet) {
    return fail(item, 'credential', `the passkey belongs to ${key.wallet}, not ${wallet}`);
  }
  let parsed: { type?: unknown; challenge?: unknown; origin?: unknown } & Record<string, unknown>;
  try {
    parsed = JSON.parse(new TextDecoder().decode(clientData)) as typeof parsed;
  } catch {
    return fail(item, 'signature', 'clientDataJSON is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) {
    return fail(item, 'signature', 'clientDataJSON is not an object');
  }
  if (parsed.type !== 'webauthn.get') {
    return fail(
      item,
      'type',
      `clientDataJSON type is ${JSON.stringify(parsed.type)}, not webauthn.get`,
    );
  }
  if (parsed.challenge !== base64url(sha256(utf8(text)))) {
    return fail(item, 'challenge', 'the challenge is not base64url(SHA-256(text))');
  }
  let rules: PasskeyRules | null;
  try {
    rules = (await ctx.passkeyRules?.()) ?? null;
  } catch {
    rules = null;
  }
  const skipped: string[] = [];
  const origins = rules?.origins ?? [];
  if (origins.length === 0) skipped.push('origin');
  else if (typeof parsed.origin !== 'string' || !origins.includes(parsed.origin)) {
    return fail(
      item,
      'origin',
      `signed at ${JSON.stringify(parsed.origin)}, which is none of ${origins.join(', ')}`,
    );
  }
  // The service refuses an assertion made in a frame of another origin.
  if (parsed.crossOrigin === true || parsed.topOrigin !== undefined) {
    return fail(item, 'origin', 'a cross-origin assertion (made in a frame of another origin)');
  }
  const rpIds = rules?.rpIds ?? [];
  if (rpIds.length === 0) skipped.push('rp_id');
  else {
    const rpIdHash = hex(authData.subarray(0, 32));
    if (!rpIds.some((id) => hex(sha256(utf8(id))) === rpIdHash)) {
      return fail(item, 'rp_id', `the rpIdHash is SHA-256 of none of ${rpIds.join(', ')}`);
    }
  }
  const flags = authData[32]!;
  if ((flags & FLAG_UP) === 0 || (flags & FLAG_UV) === 0) {
    return fail(item, 'signature', 'user presence or verification flag not set');
  }
  const signed = concat(authData, sha256(clientData));
  const valid = await verifyWithKey(key, signature, signed).catch(() => false);
  return valid
    ? pass(item, skipped)
    : fail(item, 'signature', 'the passkey signature does not verify');
}

/** WebCrypto check of a passkey signature with its SPKI key (ES256, EdDSA or RS256). */
async function verifyWithKey(
  key: PublicCredential,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  const spki = fromBase64url(key.public_key);
  if (!spki) return false;
  const subtle = globalThis.crypto.subtle;
  switch (key.algorithm.name) {
    case 'ES256': {
      const k = await subtle.importKey(
        'spki',
        buf(spki),
        { name: 'ECDSA', namedCurve: 'P-256' },
        false,
        ['verify'],
      );
      const raw = derToRaw(signature);
      if (!raw) return false;
      return subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, k, buf(raw), buf(data));
    }
    case 'EdDSA': {
      const k = await subtle.importKey('spki', buf(spki), { name: 'Ed25519' }, false, ['verify']);
      return subtle.verify({ name: 'Ed25519' }, k, buf(signature), buf(data));
    }
    case 'RS256': {
      const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      const k = await subtle.importKey('spki', buf(spki), alg, false, ['verify']);
      return subtle.verify(alg, k, buf(signature), buf(data));
    }
  }
}

/** An ECDSA DER signature (SEQUENCE of two INTEGERs) as WebCrypto's 64-byte r ‖ s. */
function derToRaw(der: Uint8Array): Uint8Array | null {
  if (der[0] !== 0x30) return null;
  let at = 2;
  const out = new Uint8Array(64);
  for (let i = 0; i < 2; i++) {
    if (der[at] !== 0x02) return null;
    const len = der[at + 1]!;
    let int = der.subarray(at + 2, at + 2 + len);
    while (int.length > 32 && int[0] === 0) int = int.subarray(1);
    if (int.length > 32) return null;
    out.set(int, i * 32 + 32 - int.length);
    at += 2 + len;
  }
  return out;
}
