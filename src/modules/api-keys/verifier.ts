import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import {
  isResource,
  isRole,
  OPERATIONS,
  permissionsOfRole,
  type Permission,
  type VerifyResult,
} from '../../lib/permissions.js';
import { TtlCache } from '../../lib/ttl-cache.js';
import type { LastUsedRecorder } from './last-used.js';
import { findForVerification, findLiveKeyInOrg } from './repo.js';
import { hashSecret, isWellFormedSecret } from './secret.js';

/**
 * How long a looked-up key is trusted before it is read again (issue 5: at most 30 s). A
 * revocation anywhere drops it sooner: `forget` here, its notice elsewhere (src/revocations.ts).
 */
export const KEY_CACHE_MS = 30_000;

interface CachedKey {
  id: string;
  orgId: string;
  walletId: string;
  permissions: ReadonlySet<Permission>;
  expiresAtMs: number;
  refusal: string | null;
}

function isPermission(name: string): name is Permission {
  const dot = name.lastIndexOf('.');
  return (
    isResource(name.slice(0, dot)) &&
    (OPERATIONS as readonly string[]).includes(name.slice(dot + 1))
  );
}

/**
 * What a key may do now: its listed permissions that its creator's role still holds
 * (docs/permissions.md: a demotion of the creator narrows the key); nothing once it left.
 */
function effectivePermissions(
  listed: readonly string[],
  creatorRole: string | null,
): ReadonlySet<Permission> {
  const creatorCan: ReadonlySet<Permission> =
    creatorRole && isRole(creatorRole) ? permissionsOfRole(creatorRole) : new Set();
  return new Set(listed.filter((p): p is Permission => isPermission(p) && creatorCan.has(p)));
}

/**
 * A live key of `orgId` as it could act now (a granter re-checked later, e.g. the inviter of
 * an invitation being confirmed); null when it is deleted, expired or not of `orgId`.
 */
export async function liveKeyPermissions(
  exec: Executor,
  orgId: string,
  keyId: string,
  now: Date,
): Promise<ReadonlySet<Permission> | null> {
  const row = await findLiveKeyInOrg(exec, orgId, keyId, now);
  return row ? effectivePermissions(row.permissions, row.creator_role) : null;
}

/**
 * Everything a live key of `orgId` lists, whether or not its creator's role holds it now: the
 * most it can act with (its creator promoted again gives the rest back). A limit on the key
 * is bounded by this (docs/policies.md), so a demotion does not let a weaker caller lift it.
 * Null when it is deleted, expired or not of `orgId`.
 */
export async function listedKeyPermissions(
  exec: Executor,
  orgId: string,
  keyId: string,
  now: Date,
): Promise<ReadonlySet<Permission> | null> {
  const row = await findLiveKeyInOrg(exec, orgId, keyId, now);
  return row ? new Set(row.permissions.filter(isPermission)) : null;
}

/**
 * The `x-api-key` verifier (src/http/auth.ts). A key seen in the last KEY_CACHE_MS is
 * answered from memory; otherwise format and checksum first (no lookup for a malformed
 * key), then SHA-256 → database lookup. Expiry is compared with the clock on every
 * use, cached or not, so a key stops at `expires_at` exactly.
 */
export class ApiKeyVerifier {
  // Keyed by the secret itself: a hit then costs no hashing at all (the hashes were a
  // measurable share of a small request). Entries live at most KEY_CACHE_MS, in memory only.
  private readonly cache = new TtlCache<string, CachedKey>(KEY_CACHE_MS);
  /** key id → secret of the cached entry, so a delete can drop it at once. */
  private readonly secretOf = new TtlCache<string, string>(KEY_CACHE_MS);
  /**
   * Moves at each forget: a lookup that began before it may have read the key as it was
   * before the delete, so what it read is used for its own request but not remembered.
   */
  private generation = 0;

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async verify(secret: string): Promise<VerifyResult> {
    let key = this.cache.get(secret);
    if (!key) {
      if (!isWellFormedSecret(secret)) return { ok: false, reason: 'malformed API key' };
      const generation = this.generation;
      const loaded = await this.load(hashSecret(secret));
      if (!loaded) return { ok: false, reason: 'invalid API key' };
      key = loaded;
      if (generation === this.generation) {
        this.cache.set(secret, key);
        this.secretOf.set(key.id, secret);
      }
    }
    if (key.refusal) return { ok: false, reason: key.refusal };
    const now = this.clock.now();
    if (now.getTime() >= key.expiresAtMs) return { ok: false, reason: 'API key has expired' };
    this.lastUsed.touch(key.id, now);
    return {
      ok: true,
      auth: {
        kind: 'api_key',
        walletId: key.walletId,
        orgId: key.orgId,
        role: null,
        permissions: key.permissions,
        sessionId: null,
        apiKeyId: key.id,
      },
    };
  }

  /** Drops this instance's cached check of a key at once (after a delete). */
  forget(keyId: string): void {
    this.generation++;
    const secret = this.secretOf.get(keyId);
    if (secret !== undefined) this.cache.delete(secret);
    this.secretOf.delete(keyId);
  }

  /** Drops every cached check (e.g. after membership changes that touch many keys). */
  forgetAll(): void {
    this.generation++;
    this.cache.clear();
    this.secretOf.clear();
  }

  private async load(hash: string): Promise<CachedKey | null> {
    const row = await findForVerification(this.db, hash);
    if (!row) return null;
    let refusal: string | null = null;
    if (row.deleted_at !== null) refusal = 'API key has been deleted';
    else if (!row.creator_role || !isRole(row.creator_role)) {
      refusal = 'the creator of this API key is no longer a member';
    }
    return {
      id: row.id,
      orgId: row.organization_id,
      walletId: row.created_by,
      permissions: effectivePermissions(row.permissions, row.creator_role),
      expiresAtMs: row.expires_at.getTime(),
      refusal,
    };
  }
}
