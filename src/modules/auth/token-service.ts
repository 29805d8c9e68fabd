import {
  SignJWT,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JSONWebKeySet,
} from 'jose';
import type { Db } from '../../db/pool.js';
import type { SecretTable } from '../../db/sealed-columns.js';
import type { Clock } from '../../lib/clock.js';
import { ulid } from '../../lib/ids.js';
import type { Role } from '../../lib/permissions.js';
import type { SecretPlace, SecretSealer } from '../../lib/sealed-secret.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import * as repo from './repo/signing-keys.js';

/** The access-token keys' private halves, for the start-up pass (src/stored-secrets.ts). */
export const signingKeySecrets: SecretTable = {
  table: 'signing_keys',
  columns: [{ name: repo.PRIVATE_JWK, read: repo.privateJwks, store: repo.storePrivateJwks }],
};

const privateKeyAt = (kid: string): SecretPlace => ({ column: repo.PRIVATE_JWK, row: kid });

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
const ALG = 'ES256';
const AUDIENCE = 'ons';

export interface AccessClaims {
  sub: string;
  org: string | null;
  sid: string;
  roles: Role[];
}

/**
 * How long a verified token's claims are remembered (in memory, keyed by the token). The
 * ES256 check costs more than the rest of a small request; its answer cannot change
 * before `exp`, which is still compared with the clock on every use.
 */
const VERIFIED_CACHE_MS = 60_000;

export type AccessCheck = { ok: true; claims: AccessClaims } | { ok: false; reason: string };

/**
 * Signs and verifies access tokens (ES256 JWTs). The key pair lives in the database so
 * every instance of the service signs with the same key; it is made on first start.
 * Only ES256 is accepted on verify, so `alg: none` and HMAC confusion fail. The private key
 * is stored sealed under SECRETS_KEY when it is set (src/lib/sealed-secret.ts).
 */
export class TokenService {
  private signingKey: Awaited<ReturnType<typeof importJWK>> | null = null;
  private kid = '';
  private jwks: JSONWebKeySet = { keys: [] };
  private keySet: ReturnType<typeof createLocalJWKSet> | null = null;
  private readonly verified = new TtlCache<string, { claims: AccessClaims; expMs: number }>(
    VERIFIED_CACHE_MS,
  );

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly issuer: string,
    private readonly secrets: SecretSealer,
  ) {}

  async init(): Promise<void> {
    const rows = await this.db.transaction(async (tx) => {
      await repo.lockKeys(tx);
      const existing = await repo.liveKeys(tx);
      if (existing.length > 0) return existing;
      const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
      const kid = ulid();
      const priv = { ...(await exportJWK(privateKey)), kid, alg: ALG };
      const pub = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
      const key = { kid, private_jwk: priv, public_jwk: pub };
      await repo.insertKey(tx, {
        ...key,
        private_jwk: this.secrets.sealJson(priv, privateKeyAt(kid)),
        alg: ALG,
      });
      return [key];
    });
    const newest = rows[0]!;
    this.kid = newest.kid;
    this.signingKey = await importJWK(
      this.secrets.openJson(newest.private_jwk, privateKeyAt(newest.kid)),
      ALG,
    );
    this.jwks = { keys: rows.map((r) => r.public_jwk) };
    this.keySet = createLocalJWKSet(this.jwks);
  }

  publicJwks(): JSONWebKeySet {
    return this.jwks;
  }

  async signAccessToken(claims: AccessClaims): Promise<string> {
    if (!this.signingKey) throw new Error('TokenService.init() was not called');
    const nowSec = Math.floor(this.clock.now().getTime() / 1000);
    return new SignJWT({ org: claims.org, sid: claims.sid, roles: claims.roles })
      .setProtectedHeader({ alg: ALG, kid: this.kid, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(this.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + ACCESS_TOKEN_TTL_SECONDS)
      .sign(this.signingKey);
  }

  async verifyAccessToken(token: string): Promise<AccessCheck> {
    if (!this.keySet) throw new Error('TokenService.init() was not called');
    const hit = this.verified.get(token);
    if (hit) {
      return this.clock.now().getTime() < hit.expMs
        ? { ok: true, claims: hit.claims }
        : { ok: false, reason: 'access token expired' };
    }
    try {
      const { payload } = await jwtVerify(token, this.keySet, {
        algorithms: [ALG],
        issuer: this.issuer,
        audience: AUDIENCE,
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'sid', 'exp'],
      });
      const org = payload.org;
      const roles = payload.roles;
      if (
        typeof payload.sub !== 'string' ||
        typeof payload.sid !== 'string' ||
        (org !== null && typeof org !== 'string') ||
        !Array.isArray(roles)
      ) {
        return { ok: false, reason: 'invalid token claims' };
      }
      const claims = { sub: payload.sub, sid: payload.sid, org, roles: roles as Role[] };
      this.verified.set(token, { claims, expMs: (payload.exp ?? 0) * 1000 });
      return { ok: true, claims };
    } catch (err) {
      const code = (err as { code?: string }).code;
      return {
        ok: false,
        reason: code === 'ERR_JWT_EXPIRED' ? 'access token expired' : 'invalid access token',
      };
    }
  }
}
