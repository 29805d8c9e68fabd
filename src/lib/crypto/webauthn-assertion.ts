import { createHash, createPublicKey, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { decodeCBOR } from '@levischuck/tiny-cbor';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';

/**
 * Hot-path WebAuthn assertion check for action signatures (docs/ebus.md, "Signature bodies"): the
 * same rules @simplewebauthn/server applies to an authentication response, on node:crypto
 * with a cached KeyObject, and UP + UV always required.
 */
export interface VerifyAssertionInput {
  credential: AuthenticationResponseJSON;
  /** base64url, as sent in the options (for actions: base64url(SHA-256(text))). */
  expectedChallenge: string;
  expectedOrigins: readonly string[];
  expectedRpId: string;
  publicKey: KeyObject;
  /** The sign count stored for this credential. */
  signCount: number;
}

export type VerifyAssertionResult =
  { ok: true; newSignCount: number } | { ok: false; reason: string };

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const B64URL_RE = /^[A-Za-z0-9_-]*$/;

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

function decodeB64url(value: unknown): Buffer | undefined {
  if (typeof value !== 'string' || !B64URL_RE.test(value)) return undefined;
  return Buffer.from(value, 'base64url');
}

const rpIdHashes = new Map<string, Buffer>();
function rpIdHash(rpId: string): Buffer {
  let hash = rpIdHashes.get(rpId);
  if (!hash) {
    hash = createHash('sha256').update(rpId).digest();
    if (rpIdHashes.size > 64) rpIdHashes.clear();
    rpIdHashes.set(rpId, hash);
  }
  return hash;
}

function verifySignature(key: KeyObject, data: Buffer, signature: Buffer): boolean | undefined {
  try {
    const type = key.asymmetricKeyType;
    if (type === 'ec') {
      // ES256: DER-encoded ECDSA over P-256 with SHA-256.
      if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return undefined;
      return verify('sha256', data, { key, dsaEncoding: 'der' }, signature);
    }
    // RS256: RSASSA-PKCS1-v1_5 with SHA-256.
    if (type === 'rsa') return verify('sha256', data, key, signature);
    if (type === 'ed25519') return verify(null, data, key, signature);
    return undefined;
  } catch {
    return false;
  }
}

export function verifyWebauthnAssertion(input: VerifyAssertionInput): VerifyAssertionResult {
  const { credential } = input;
  if (typeof credential !== 'object' || credential === null) return fail('credential missing');
  if (credential.type !== 'public-key') return fail('credential type is not public-key');
  const response = credential.response as Partial<AuthenticationResponseJSON['response']>;
  if (typeof response !== 'object' || response === null) return fail('credential response missing');

  const clientDataBytes = decodeB64url(response.clientDataJSON);
  const authData = decodeB64url(response.authenticatorData);
  const signature = decodeB64url(response.signature);
  if (!clientDataBytes || !authData || !signature) {
    return fail('clientDataJSON, authenticatorData and signature must be base64url');
  }

  let clientData: unknown;
  try {
    clientData = JSON.parse(clientDataBytes.toString('utf8'));
  } catch {
    return fail('clientDataJSON is not JSON');
  }
  if (typeof clientData !== 'object' || clientData === null) {
    return fail('clientDataJSON is not an object');
  }
  const { type, challenge, origin, crossOrigin, topOrigin } = clientData as Record<string, unknown>;
  if (type !== 'webauthn.get') return fail('clientData type is not webauthn.get');
  if (typeof challenge !== 'string' || challenge !== input.expectedChallenge) {
    return fail('challenge does not match');
  }
  if (typeof origin !== 'string' || !input.expectedOrigins.includes(origin)) {
    return fail('origin is not allowed');
  }
  if (crossOrigin === true || topOrigin !== undefined) return fail('cross-origin assertion');

  if (authData.length < 37) return fail('authenticatorData is too short');
  if (!authData.subarray(0, 32).equals(rpIdHash(input.expectedRpId))) {
    return fail('rp id does not match');
  }
  const flags = authData[32]!;
  if ((flags & FLAG_UP) === 0) return fail('user presence flag not set');
  if ((flags & FLAG_UV) === 0) return fail('user verification flag not set');
  const newSignCount = authData.readUInt32BE(33);

  const clientDataHash = createHash('sha256').update(clientDataBytes).digest();
  const valid = verifySignature(
    input.publicKey,
    Buffer.concat([authData, clientDataHash]),
    signature,
  );
  if (valid === undefined) return fail('unsupported public key type');
  if (!valid) return fail('signature is invalid');

  if ((newSignCount > 0 || input.signCount > 0) && newSignCount <= input.signCount) {
    return fail('sign count did not increase');
  }
  return { ok: true, newSignCount };
}

// COSE key parameters (RFC 9053, RFC 8230).
const COSE_KTY = 1;
const COSE_ALG = 3;
const COSE_CRV = -1; // EC2 / OKP
const COSE_X = -2; // EC2 / OKP
const COSE_Y = -3; // EC2
const COSE_N = -1; // RSA
const COSE_E = -2; // RSA

const KTY_OKP = 1;
const KTY_EC2 = 2;
const KTY_RSA = 3;
const ALG_ES256 = -7;
const ALG_EDDSA = -8;
const ALG_RS256 = -257;
const CRV_P256 = 1;
const CRV_ED25519 = 6;

function bytesParam(map: Map<string | number, unknown>, label: number, name: string): string {
  const value = map.get(label);
  if (!(value instanceof Uint8Array)) throw new Error(`COSE key: ${name} is missing`);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64url');
}

/**
 * A node:crypto public KeyObject from a COSE_Key: EC2 P-256 (alg -7), RSA (alg -257) or
 * OKP Ed25519 (alg -8). Throws on anything else.
 */
export function coseToKeyObject(cosePublicKey: Uint8Array): KeyObject {
  const decoded = decodeCBOR(cosePublicKey);
  if (!(decoded instanceof Map)) throw new Error('COSE key: not a CBOR map');
  const map = decoded as Map<string | number, unknown>;
  const kty = map.get(COSE_KTY);
  const alg = map.get(COSE_ALG);

  if (kty === KTY_EC2 && alg === ALG_ES256) {
    if (map.get(COSE_CRV) !== CRV_P256) throw new Error('COSE key: EC2 curve is not P-256');
    const x = bytesParam(map, COSE_X, 'x');
    const y = bytesParam(map, COSE_Y, 'y');
    return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
  }
  if (kty === KTY_RSA && alg === ALG_RS256) {
    const n = bytesParam(map, COSE_N, 'n');
    const e = bytesParam(map, COSE_E, 'e');
    return createPublicKey({ key: { kty: 'RSA', n, e }, format: 'jwk' });
  }
  if (kty === KTY_OKP && alg === ALG_EDDSA) {
    if (map.get(COSE_CRV) !== CRV_ED25519) throw new Error('COSE key: OKP curve is not Ed25519');
    const x = bytesParam(map, COSE_X, 'x');
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  }
  throw new Error(`COSE key: unsupported kty ${String(kty)} / alg ${String(alg)}`);
}

/** Most credentials a process keeps parsed keys for. */
export const KEY_CACHE_SIZE = 10_000;

const keyCache = new Map<string, { cose: Buffer; key: KeyObject }>();

/**
 * `coseToKeyObject` with a least-recently-used cache keyed by credential id. The stored
 * COSE bytes are compared on every hit, so a changed key is never served stale.
 */
export function getCachedKey(credentialId: string, cose: Uint8Array): KeyObject {
  const hit = keyCache.get(credentialId);
  if (hit && hit.cose.equals(cose)) {
    keyCache.delete(credentialId);
    keyCache.set(credentialId, hit);
    return hit.key;
  }
  const key = coseToKeyObject(cose);
  keyCache.delete(credentialId);
  keyCache.set(credentialId, { cose: Buffer.from(cose), key });
  while (keyCache.size > KEY_CACHE_SIZE) {
    const oldest = keyCache.keys().next();
    if (oldest.done) break;
    keyCache.delete(oldest.value);
  }
  return key;
}

/** Number of keys currently cached (for tests and metrics). */
export function keyCacheSize(): number {
  return keyCache.size;
}

/** Forget every cached key. */
export function clearKeyCache(): void {
  keyCache.clear();
}
