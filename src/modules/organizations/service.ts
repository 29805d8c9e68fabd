import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate, asIso } from '../../db/values.js';
import { AppError, Code, failedPrecondition, forbidden, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { parseList, pageOf, type Page } from '../../lib/list.js';
import { formatTokens, NATIVE_TOKEN } from '../../lib/money.js';
import { requireGrant, SELF_SIGNUP_ROLE } from '../../lib/grants.js';
import { isRole, requirePermission, type AuthContext } from '../../lib/permissions.js';
import type { TokenResponse } from '../../lib/tokens.js';
import { defaultOrganizations } from '../wallets/index.js';
import { granterIn, requireOrgPermission, resolveOrgAccess } from './access.js';
import * as repo from './repo.js';
import type {
  CreateOrganizationInput,
  ListOrganizationsQuery,
  Organization,
  UpdateOrganizationInput,
} from './schema.js';

/** What organizations ask of sign-in (auth's sessions; src/container.ts wires it). */
export interface OrganizationSessions {
  /** Tokens in the organization's context (a switch continues the caller's session). */
  issue(
    exec: Executor,
    input: { walletId: string; orgId: string; device: string; ip: string; continues?: string },
  ): Promise<TokenResponse>;
  /** Drops what this instance cached about callers (memberships changed). */
  invalidateAll(): void;
  /**
   * Refuses (403 code 7) a caller with a session whose sign-in is not recent; an API key
   * passes (docs/auth.md, "Changing credentials").
   */
  requireRecentSignInOrKey(exec: Executor, auth: AuthContext, action: string): Promise<void>;
}

/**
 * What organizations ask of memberships (members implements it, src/container.ts wires it):
 * members own the `members` table.
 */
export interface OrganizationMembers {
  /** The founder of a new organization joins it as its owner. */
  addFounder(
    exec: Executor,
    f: { orgId: string; walletId: string; email: string | null; name: string | null; now: Date },
  ): Promise<void>;
  /** Active members other than `walletId`. */
  countOtherActive(exec: Executor, orgId: string, walletId: string): Promise<number>;
  /** Every membership of a deleted organization ends. */
  endAll(exec: Executor, orgId: string, now: Date): Promise<void>;
}

export type { OrganizationRow } from './repo.js';

/**
 * One live organization with the wallet's role in it (null when not an active member);
 * `forUpdate` locks its row. Null when there is none.
 */
export function findOrganization(
  exec: Executor,
  orgId: string,
  walletId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<repo.OrganizationRow | null> {
  return repo.findOrganization(exec, orgId, walletId, opts);
}

/**
 * Counts a switch of one of the organization's templates' visibility on its row (templates'
 * visibility switch; the event bus's group statement fences on it, ebus/repo/group-write.ts).
 */
export function markTemplateSwitch(exec: Executor, orgId: string): Promise<void> {
  return repo.markTemplateSwitch(exec, orgId);
}

/**
 * Adds `amountWei` (signed) to the organization's balance unless it would go below zero, in
 * one statement (balance's `recordLedgerEntry`). The balance after, or null when unchanged.
 */
export function addToBalance(
  exec: Executor,
  orgId: string,
  amountWei: bigint,
): Promise<bigint | null> {
  return repo.addToBalance(exec, orgId, amountWei);
}

function toOrganization(row: repo.OrganizationRow): Organization {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    settings: { allow_self_signup: row.settings.allow_self_signup === true },
    role: row.role !== null && isRole(row.role) ? row.role : null,
    when_created: asIso(row.created_at),
    when_modified: asIso(row.updated_at),
  };
}

/**
 * Organizations: the tenants. A person sees the organizations they are an active member
 * of; an API key sees only its own. Every read of one organization goes through
 * `resolveOrgAccess`, so another organization's id answers 404.
 */
export class OrganizationService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sessions: OrganizationSessions,
    private readonly members: OrganizationMembers,
    /** Live organizations a wallet may own (ORGANIZATIONS_PER_WALLET, docs/organizations.md). */
    private readonly perWallet = 20,
  ) {}

  /** The organizations the caller belongs to, with its role in each. */
  async list(auth: AuthContext, q: ListOrganizationsQuery): Promise<Page<Organization>> {
    if (auth.kind === 'api_key') requirePermission(auth, 'organizations.read');
    const p = parseList(q, repo.ORGANIZATION_LIST);
    const rows = await repo.listForWallet(
      this.db,
      auth.walletId,
      {
        id: q.id,
        name: q.name,
        autocomplete: q.autocomplete,
        roleName: q.role_name,
        onlyOrgId: auth.kind === 'api_key' ? (auth.orgId ?? '') : undefined,
        dates: q,
      },
      p,
    );
    const page = pageOf(
      rows,
      p,
      (r) =>
        p.sortBy === 'name'
          ? r.name
          : p.sortBy === 'when_modified'
            ? asDate(r.updated_at)
            : asDate(r.created_at),
      (r) => r.id,
    );
    return { ...page, items: page.items.map(toOrganization) };
  }

  /**
   * Creates an organization; its creator becomes `owner`. A person may always create one
   * (that is how a standalone account starts); an API key needs `organizations.create`
   * and makes the wallet that created the key the owner. The founder is the owner, so
   * `allow_self_signup` here is within its ceiling (src/lib/grants.ts). A wallet that already
   * owns `perWallet` live organizations is refused (429 code 8, `details.max_organizations`):
   * free organizations must not multiply every per-organization allowance (docs/organizations.md,
   * "How many").
   */
  async create(auth: AuthContext, input: CreateOrganizationInput): Promise<{ id: string }> {
    if (auth.kind === 'api_key') requirePermission(auth, 'organizations.create');
    const id = newId('organization');
    const now = this.clock.now();
    await this.db.transaction(async (tx) => {
      const wallet = await repo.findWallet(tx, auth.walletId);
      if (!wallet) throw notFound('wallet');
      await repo.lockFoundingsOf(tx, auth.walletId);
      if ((await repo.countOwnedBy(tx, auth.walletId)) >= this.perWallet) {
        throw new AppError(
          Code.RESOURCE_EXHAUSTED,
          `a wallet may own at most ${this.perWallet} organizations; delete one, or pass its ownership to another member, first`,
          { max_organizations: this.perWallet },
        );
      }
      await repo.insertOrganization(tx, {
        id,
        name: input.name,
        description: input.description ?? '',
        allowSelfSignup: input.settings?.allow_self_signup ?? false,
        now,
      });
      await this.members.addFounder(tx, {
        orgId: id,
        walletId: auth.walletId,
        email: wallet.email,
        name: wallet.name,
        now,
      });
      await defaultOrganizations.setIfNone(tx, auth.walletId, id);
    });
    return { id };
  }

  async get(auth: AuthContext, orgId: string): Promise<Organization> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'organizations.read');
    const row = await repo.findOrganization(this.db, orgId, auth.walletId);
    if (!row) throw notFound('organization');
    return toOrganization({ ...row, role: access.role });
  }

  /**
   * Turning `allow_self_signup` on grants SELF_SIGNUP_ROLE to anyone who signs up, so the
   * caller must be able to grant that role itself (src/lib/grants.ts), and a person needs a
   * recent sign-in (docs/auth.md, "Changing credentials": whoever holds a stolen token could
   * open the organization and join it with a credential of their own). Asked in the
   * transaction that turns it on, under the row's lock, only when it is off: sending it on
   * again, or turning it off, is not a grant.
   */
  async update(auth: AuthContext, orgId: string, input: UpdateOrganizationInput): Promise<void> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'organizations.update');
    if (input.settings?.allow_self_signup !== true) {
      await repo.updateOrganization(this.db, orgId, input, this.clock.now());
      return;
    }
    requireGrant(granterIn(access), { role: SELF_SIGNUP_ROLE });
    await this.db.transaction(async (tx) => {
      const row = await repo.findOrganization(tx, orgId, auth.walletId, { forUpdate: true });
      if (row && row.settings.allow_self_signup !== true) {
        await this.sessions.requireRecentSignInOrKey(tx, auth, 'allow self sign-up');
      }
      await repo.updateOrganization(tx, orgId, input, this.clock.now());
    });
  }

  /**
   * Soft-deletes an organization. Only an owner (`organizations.delete`), and only once it
   * holds no balance and has no other active members: the message says which is in the way.
   */
  async remove(auth: AuthContext, orgId: string): Promise<void> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'organizations.delete');
    await this.db.transaction(async (tx) => {
      // Locking the row keeps a deposit or a new member from slipping in meanwhile.
      const row = await repo.findOrganization(tx, orgId, auth.walletId, { forUpdate: true });
      if (!row) throw notFound('organization');
      const reasons: string[] = [];
      const balance = BigInt(row.balance_wei);
      if (balance > 0n) {
        reasons.push(`it still holds a balance of ${formatTokens(balance)} ${NATIVE_TOKEN}`);
      }
      const others = await this.members.countOtherActive(tx, orgId, auth.walletId);
      if (others > 0) {
        reasons.push(`it still has ${others} other active member${others === 1 ? '' : 's'}`);
      }
      if (reasons.length > 0) {
        throw failedPrecondition(`the organization cannot be deleted: ${reasons.join(' and ')}`);
      }
      const now = this.clock.now();
      await repo.softDeleteOrganization(tx, orgId, now);
      await this.members.endAll(tx, orgId, now);
      await defaultOrganizations.clearEverywhere(tx, orgId, now);
    });
    this.sessions.invalidateAll();
  }

  /**
   * New tokens in another organization's context (a person only; the route refuses keys).
   * Not an active member of a live organization → 403 code 7.
   */
  async switchTo(
    auth: AuthContext,
    orgId: string,
    client: { device: string; ip: string },
  ): Promise<TokenResponse> {
    if (auth.kind !== 'user') throw forbidden('needs a signed-in person');
    return this.db.transaction(async (tx) => {
      const row = await repo.findOrganization(tx, orgId, auth.walletId);
      if (!row || row.role === null) throw forbidden('not a member of that organization');
      await defaultOrganizations.set(tx, auth.walletId, orgId, this.clock.now());
      return this.sessions.issue(tx, {
        walletId: auth.walletId,
        orgId,
        device: client.device,
        ip: client.ip,
        continues: auth.sessionId ?? undefined,
      });
    });
  }
}

export type { LowBalanceNotice } from './repo.js';

/**
 * Sets (or with null removes) the organization's low-balance threshold (balance's
 * `setLowBalance`); a new threshold is a new crossing to tell. False when it is gone.
 */
export function setLowBalance(exec: Executor, orgId: string, wei: bigint | null): Promise<boolean> {
  return repo.setLowBalance(exec, orgId, wei);
}

/**
 * One pass of the low-balance notifier (balance/low-balance.ts): claims the organizations
 * below their threshold that are due a notice, with who to tell (see `repo.claimLowBalances`).
 */
export function claimLowBalances(
  exec: Executor,
  now: Date,
  limit?: number,
): Promise<repo.LowBalanceNotice[]> {
  return repo.claimLowBalances(exec, now, limit);
}

/** Moves the organization's spend-policy version under its row lock (policies/service.ts). */
export function bumpPolicyVersion(exec: Executor, orgId: string): Promise<boolean> {
  return repo.bumpPolicyVersion(exec, orgId);
}
