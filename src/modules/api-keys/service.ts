import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { invalid, notFound } from '../../lib/errors.js';
import { granterOf, requireGrant } from '../../lib/grants.js';
import { newId } from '../../lib/ids.js';
import { pageOf, parseList } from '../../lib/list.js';
import {
  isResource,
  OPERATIONS,
  requireOrg,
  requirePermission,
  toCrud,
  type AuthContext,
  type Permission,
} from '../../lib/permissions.js';
import * as repo from './repo.js';
import type { ApiKeyRow } from './repo.js';
import type {
  ApiKey,
  ApiKeyList,
  CreateApiKeyInput,
  CreatedApiKey,
  ListApiKeysQuery,
  PermissionInput,
} from './schema.js';
import { MAX_LIVE_KEYS, MAX_TTL_HOURS } from './schema.js';
import { hashSecret, newSecret } from './secret.js';
import type { ApiKeyVerifier } from './verifier.js';

const HOUR_MS = 3_600_000;

/** What API keys ask of sign-in (auth's sessions; src/container.ts wires it). */
export interface ApiKeySessions {
  /** Refuses (403 code 7) a person whose sign-in is not recent (docs/auth.md). */
  requireRecentSignIn(exec: Executor, auth: AuthContext, action?: string): Promise<void>;
}

/**
 * `[{resource, crud}]` → flat permission names. An unknown resource or one named twice is
 * a bad request (400 code 3), not a permission problem.
 */
export function permissionsFromInput(input: readonly PermissionInput[]): Permission[] {
  const seen = new Set<string>();
  const out: Permission[] = [];
  input.forEach((p, i) => {
    const field = `permissions.${i}.resource`;
    if (!isResource(p.resource)) {
      throw invalid(`unknown resource "${p.resource}" (see docs/permissions.md)`, [
        { field, reason: 'is not a known resource' },
      ]);
    }
    if (seen.has(p.resource)) {
      throw invalid(`resource "${p.resource}" is named twice`, [
        { field, reason: 'is named twice' },
      ]);
    }
    seen.add(p.resource);
    for (const op of OPERATIONS) if (p.crud[op]) out.push(`${p.resource}.${op}`);
  });
  return out;
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    permissions: toCrud(new Set(row.permissions as Permission[])),
    expires_at: row.expires_at.toISOString(),
    last_used_at: row.last_used_at ? row.last_used_at.toISOString() : null,
    when_created: row.created_at.toISOString(),
    when_modified: row.updated_at.toISOString(),
  };
}

/** API keys of an organization: create, list, revoke (docs/api.md, "API keys"). */
export class ApiKeyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly verifier: ApiKeyVerifier,
    private readonly sessions: ApiKeySessions,
  ) {}

  /**
   * Creates a key acting for the caller's organization with at most the caller's own
   * permissions; answers the secret, which is never shown again. A person needs a recent
   * sign-in (a key lasts up to a year and outlives the session: a stolen token must not mint
   * one); a key cannot create keys (the route takes a person's token only).
   */
  async create(auth: AuthContext, input: CreateApiKeyInput): Promise<CreatedApiKey> {
    requirePermission(auth, 'api-keys.create');
    const orgId = requireOrg(auth);
    const permissions = permissionsFromInput(input.permissions);
    // A key that grants nothing can do nothing: refused, not made (docs/decisions.md).
    if (permissions.length === 0) {
      throw invalid('an API key needs at least one permission', [
        { field: 'permissions', reason: 'grants nothing' },
      ]);
    }
    const grant = requireGrant(granterOf(auth), { permissions });
    if (auth.kind === 'user') {
      await this.sessions.requireRecentSignIn(this.db, auth, 'create an API key');
    }
    const id = newId('apiKey');
    const secret = newSecret();
    await this.db.transaction(async (tx) => {
      // Serialises creates per organization: the count below cannot go stale before the insert.
      if (!(await repo.lockOrganization(tx, orgId))) throw notFound('organization');
      const now = this.clock.now();
      if ((await repo.countLive(tx, orgId, now)) >= MAX_LIVE_KEYS) {
        throw invalid(`an organization holds at most ${MAX_LIVE_KEYS} live API keys`);
      }
      await repo.insertKey(tx, {
        id,
        orgId,
        createdBy: auth.walletId,
        name: input.name,
        secretHash: hashSecret(secret),
        grant,
        expiresAt: new Date(now.getTime() + (input.ttl_hours ?? MAX_TTL_HOURS) * HOUR_MS),
        now,
      });
    });
    return { id, secret };
  }

  /** The organization's undeleted keys, newest first, paged; never a secret. */
  async list(auth: AuthContext, query: ListApiKeysQuery): Promise<ApiKeyList> {
    requirePermission(auth, 'api-keys.read');
    const orgId = requireOrg(auth);
    const page = parseList(query, repo.API_KEY_LIST);
    const rows = await repo.listKeys(this.db, orgId, page, query.name);
    const { items, next, has_more } = pageOf(
      rows,
      page,
      (r) => r.created_at,
      (r) => r.id,
    );
    return { keys: items.map(toApiKey), next, has_more };
  }

  /**
   * Revokes a key at once: refused from the next request on this instance, and on the others
   * once the revocation notice arrives (src/revocations.ts).
   */
  async delete(auth: AuthContext, id: string): Promise<void> {
    requirePermission(auth, 'api-keys.delete');
    const orgId = requireOrg(auth);
    if (!(await repo.deleteKey(this.db, orgId, id, this.clock.now()))) {
      throw notFound('API key');
    }
    this.verifier.forget(id);
  }
}

/**
 * Revokes every live key a wallet created in one organization, as a delete does (members'
 * removal of its member: the keys stop for good, and a return brings none back); answers
 * their ids.
 */
export function revokeKeysCreatedIn(
  exec: Executor,
  orgId: string,
  walletId: string,
  now: Date,
): Promise<string[]> {
  return repo.revokeKeysCreatedBy(exec, walletId, now, orgId);
}

/**
 * Revokes every live key a wallet created (the hand-over of a wallet to its address's owner,
 * auth/hand-over.ts); answers their ids.
 */
export function revokeKeysCreatedBy(
  exec: Executor,
  walletId: string,
  now: Date,
): Promise<string[]> {
  return repo.revokeKeysCreatedBy(exec, walletId, now);
}
