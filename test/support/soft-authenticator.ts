import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { encodeCBOR } from '@levischuck/tiny-cbor';
import type { CBORType } from '@levischuck/tiny-cbor';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

/**
 * A software WebAuthn authenticator (and the browser part of the ceremony) on node:crypto.
 * It really generates key pairs, builds authenticator data, CBOR attestation objects with
 * `none` attestation and signs assertions — the output is what a browser's
 * `credential.toJSON()` gives, accepted by @simplewebauthn/server's verifiers.
 *
 * Overrides produce the faulty responses negative tests need: a wrong origin, a wrong RP
 * id, other flags (e.g. no UV), a chosen (replayed) sign count, another credential id.
 */

export type SoftAlgorithm = -7 | -8 | -257;

export interface SoftAuthenticatorOptions {
  /** Origin written into clientDataJSON. Default `http://localhost:8080`. */
  origin?: string;
  /** RP id used when the options do not name one. Default `localhost`. */
  rpId?: string;
  /** COSE algorithm of new credentials: -7 ES256 (default), -8 EdDSA, -257 RS256. */
  algorithm?: SoftAlgorithm;
}

export interface SoftCreationOptions {
  challenge: string;
  rp: { id?: string; name?: string };
  /** base64url user handle, as in PublicKeyCredentialCreationOptionsJSON. */
  user: { id: string; name?: string; displayName?: string };
  pubKeyCredParams?: readonly { alg: number; type?: string }[];
}

export interface SoftRequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: readonly { id: string; type?: string; transports?: readonly string[] }[];
}

export interface SoftOverrides {
  origin?: string;
  /** RP id whose hash goes into authenticatorData (clientData is unchanged). */
  rpId?: string;
  /** Authenticator data flags byte. Defaults: UP|UV (0x05), plus AT (0x40) on creation. */
  flags?: number;
  /** Sign count to report; does not move the authenticator's own counter. */
  signCount?: number;
  /** Credential id to report (e.g. an unknown one); the current key still signs. */
  credentialId?: string;
  /** clientData type. Defaults to `webauthn.create` / `webauthn.get`. */
  type?: string;
  /** Challenge written into clientData instead of the options' one. */
  challenge?: string;
}

interface StoredCredential {
  id: string;
  rpId: string;
  userHandle: string;
  algorithm: SoftAlgorithm;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyCose: Uint8Array<ArrayBuffer>;
  signCount: number;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

function u32(value: number): Buffer {
  const buf = Buffer.alloc(4);
  buf.writeUInt32BE(value >>> 0);
  return buf;
}

function keyPair(algorithm: SoftAlgorithm): { privateKey: KeyObject; publicKey: KeyObject } {
  switch (algorithm) {
    case -7:
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case -8:
      return generateKeyPairSync('ed25519');
    case -257:
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
  }
}

function jwkBytes(value: string | undefined, name: string): Uint8Array {
  if (!value) throw new Error(`SoftAuthenticator: public JWK has no ${name}`);
  return new Uint8Array(Buffer.from(value, 'base64url'));
}

/** The COSE_Key (RFC 9053) of a public key, CBOR-encoded. */
export function publicKeyToCose(
  publicKey: KeyObject,
  algorithm: SoftAlgorithm,
): Uint8Array<ArrayBuffer> {
  const jwk = publicKey.export({ format: 'jwk' });
  const entries: [number, CBORType][] =
    algorithm === -7
      ? [
          [1, 2], // kty EC2
          [3, -7], // alg ES256
          [-1, 1], // crv P-256
          [-2, jwkBytes(jwk.x, 'x')],
          [-3, jwkBytes(jwk.y, 'y')],
        ]
      : algorithm === -8
        ? [
            [1, 1], // kty OKP
            [3, -8], // alg EdDSA
            [-1, 6], // crv Ed25519
            [-2, jwkBytes(jwk.x, 'x')],
          ]
        : [
            [1, 3], // kty RSA
            [3, -257], // alg RS256
            [-1, jwkBytes(jwk.n, 'n')],
            [-2, jwkBytes(jwk.e, 'e')],
          ];
  return new Uint8Array(encodeCBOR(new Map<string | number, CBORType>(entries)));
}

function signWith(credential: StoredCredential, data: Buffer): Buffer {
  // ES256 → DER ECDSA (as authenticators send it); RS256 → PKCS#1 v1.5; EdDSA → raw.
  return credential.algorithm === -8
    ? sign(null, data, credential.privateKey)
    : sign('sha256', data, credential.privateKey);
}

export class SoftAuthenticator {
  readonly origin: string;
  readonly rpId: string;
  readonly algorithm: SoftAlgorithm;
  /** AAGUID reported at registration (all zeros, as with `none` attestation). */
  readonly aaguid = Buffer.alloc(16);
  private readonly credentials = new Map<string, StoredCredential>();
  private current: StoredCredential | undefined;

  constructor(opts: SoftAuthenticatorOptions = {}) {
    this.origin = opts.origin ?? 'http://localhost:8080';
    this.rpId = opts.rpId ?? 'localhost';
    this.algorithm = opts.algorithm ?? -7;
  }

  /** base64url id of the most recently created credential. */
  get credentialId(): string {
    return this.requireCurrent().id;
  }

  /** CBOR COSE public key of the most recently created credential. */
  get publicKeyCose(): Uint8Array<ArrayBuffer> {
    return this.requireCurrent().publicKeyCose;
  }

  /** node:crypto public key of the most recently created credential. */
  get publicKey(): KeyObject {
    return this.requireCurrent().publicKey;
  }

  /** The authenticator's own sign count for the most recent credential. */
  get signCount(): number {
    return this.requireCurrent().signCount;
  }

  /** navigator.credentials.create(): a new credential with `none` attestation. */
  createCredential(
    options: SoftCreationOptions,
    overrides: SoftOverrides = {},
  ): RegistrationResponseJSON {
    const algs = options.pubKeyCredParams?.map((p) => p.alg);
    if (algs && algs.length > 0 && !algs.includes(this.algorithm)) {
      throw new Error(`SoftAuthenticator: RP does not accept algorithm ${this.algorithm}`);
    }
    const rpId = options.rp.id ?? this.rpId;
    const { privateKey, publicKey } = keyPair(this.algorithm);
    const rawId = randomBytes(32);
    const credential: StoredCredential = {
      id: b64url(rawId),
      rpId,
      userHandle: options.user.id,
      algorithm: this.algorithm,
      privateKey,
      publicKey,
      publicKeyCose: publicKeyToCose(publicKey, this.algorithm),
      signCount: 0,
    };
    this.credentials.set(credential.id, credential);
    this.current = credential;

    const reportedId = overrides.credentialId ?? credential.id;
    const reportedRawId = Buffer.from(reportedId, 'base64url');
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(reportedRawId.length);
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? rpId),
      Buffer.from([overrides.flags ?? FLAG_UP | FLAG_UV | FLAG_AT]),
      u32(overrides.signCount ?? credential.signCount),
      this.aaguid,
      idLength,
      reportedRawId,
      credential.publicKeyCose,
    ]);
    const clientDataJSON = this.clientData(
      overrides.type ?? 'webauthn.create',
      overrides.challenge ?? options.challenge,
      overrides.origin,
    );
    const attestationObject = encodeCBOR(
      new Map<string | number, CBORType>([
        ['fmt', 'none'],
        ['attStmt', new Map<string | number, CBORType>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    return {
      id: reportedId,
      rawId: reportedId,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        authenticatorData: b64url(authData),
        transports: ['internal'],
        publicKeyAlgorithm: this.algorithm,
        publicKey: b64url(publicKey.export({ format: 'der', type: 'spki' })),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get(): an assertion over the challenge, counter advanced. */
  getAssertion(
    options: SoftRequestOptions,
    overrides: SoftOverrides = {},
  ): AuthenticationResponseJSON {
    const rpId = options.rpId ?? this.rpId;
    const credential = this.pickCredential(options, rpId);
    let signCount: number;
    if (overrides.signCount !== undefined) {
      signCount = overrides.signCount;
    } else {
      credential.signCount += 1;
      signCount = credential.signCount;
    }
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? rpId),
      Buffer.from([overrides.flags ?? FLAG_UP | FLAG_UV]),
      u32(signCount),
    ]);
    const clientDataJSON = this.clientData(
      overrides.type ?? 'webauthn.get',
      overrides.challenge ?? options.challenge,
      overrides.origin,
    );
    const signature = signWith(credential, Buffer.concat([authData, sha256(clientDataJSON)]));
    const id = overrides.credentialId ?? credential.id;
    return {
      id,
      rawId: id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  private clientData(type: string, challenge: string, origin: string | undefined): Buffer {
    // Same member order as browsers emit.
    return Buffer.from(
      JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false }),
      'utf8',
    );
  }

  private pickCredential(options: SoftRequestOptions, rpId: string): StoredCredential {
    const allowed = options.allowCredentials ?? [];
    if (allowed.length > 0) {
      for (const { id } of allowed) {
        const found = this.credentials.get(id);
        if (found) return found;
      }
      throw new Error('SoftAuthenticator: none of allowCredentials is held here');
    }
    // Discoverable credential: the newest one for this RP, else the newest at all.
    const forRp = [...this.credentials.values()].filter((c) => c.rpId === rpId).pop();
    return forRp ?? this.requireCurrent();
  }

  private requireCurrent(): StoredCredential {
    if (!this.current) throw new Error('SoftAuthenticator: no credential created yet');
    return this.current;
  }
}
