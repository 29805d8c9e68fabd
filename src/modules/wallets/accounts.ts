import type { Executor } from '../../db/pool.js';
import { addressForWalletId } from '../../lib/address.js';
import type { Clock } from '../../lib/clock.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { isUniqueViolation } from '../../lib/pg-errors.js';
import type { SessionService, TokenResponse } from '../auth/session-service.js';
import type { AddressNotices } from './address-notices.js';
import * as repo from './repo.js';

/** Where a sign-in comes from; stored on the session so the person can recognise it. */
export interface ClientContext {
  device?: string;
  ip?: string;
  /** The credential that proved the sign-in (none for a code): removing it ends the session. */
  credentialId?: string;
}

export interface NewAccount {
  email?: string | null;
  phoneNumber?: string | null;
  name?: string | null;
  passwordHash?: string | null;
  /** An EOA wallet's address is its EOA; every other wallet's is derived from its id. */
  address?: string;
  emailConfirmed?: boolean;
}

/**
 * What every sign-up and sign-in flow shares: making a wallet, choosing the organization
 * context (joining it when self sign-up allows) and opening the session.
 */
export class Accounts {
  constructor(
    private readonly clock: Clock,
    private readonly sessions: SessionService,
    readonly notices: AddressNotices,
  ) {}

  /** A new wallet (and its password credential, `credentialId`, when it has a password). */
  async createWallet(
    tx: Executor,
    input: NewAccount,
  ): Promise<{ id: string; address: string; credentialId?: string }> {
    const id = newId('wallet');
    const address = (input.address ?? addressForWalletId(id)).toLowerCase();
    const now = this.clock.now();
    const email = input.email ?? null;
    try {
      await repo.insertWallet(tx, {
        id,
        address,
        email,
        phoneNumber: input.phoneNumber ?? null,
        name: input.name ?? null,
        passwordHash: input.passwordHash ?? null,
        emailConfirmedAt: input.emailConfirmed ? now : null,
        now,
      });
    } catch (err) {
      // Only a wallet created with its email proven (Google) can meet its holder here.
      if (isUniqueViolation(err, 'wallets_email_held')) {
        throw conflict('an account with this email already exists');
      }
      if (isUniqueViolation(err, 'wallets_address_key')) {
        throw conflict('a wallet with this address already exists');
      }
      throw err;
    }
    let credentialId: string | undefined;
    if (input.passwordHash) {
      credentialId = newId('credential');
      await repo.insertCredential(tx, {
        id: credentialId,
        walletId: id,
        type: 'password',
        label: 'password',
        externalId: null,
        now,
      });
    }
    if (email && input.emailConfirmed) await repo.bindInvitations(tx, id, email, now);
    return { id, address, credentialId };
  }

  /**
   * Confirms the wallet's address after a code proved it (see `repo.confirmAddress`) and
   * hands the wallet the invitations accepted for that email. `held` when another wallet
   * confirmed it first, even concurrently (the transaction is then unusable: the caller
   * refuses).
   */
  async confirmAddress(
    exec: Executor,
    walletId: string,
    channel: 'email' | 'sms',
  ): Promise<repo.Confirmation> {
    const now = this.clock.now();
    let outcome: repo.Confirmation;
    try {
      outcome = await repo.confirmAddress(exec, walletId, channel, now);
    } catch (err) {
      if (isUniqueViolation(err, 'wallets_email_held')) return 'held';
      if (isUniqueViolation(err, 'wallets_phone_held')) return 'held';
      throw err;
    }
    if (outcome === 'confirmed' && channel === 'email') {
      const wallet = await repo.findWallet(exec, { id: walletId });
      if (wallet?.email) await repo.bindInvitations(exec, walletId, wallet.email, now);
    }
    return outcome;
  }

  /**
   * Refuses early when a new wallet could not join `orgId`: 404 when it does not exist,
   * 403 when it does not allow self sign-up.
   */
  async requireOpenOrganization(exec: Executor, orgId: string): Promise<void> {
    const org = await repo.findOrganization(exec, orgId);
    if (!org) throw notFound('organization');
    if (!org.allow_self_signup) throw forbidden('this organization does not allow self sign-up');
  }

  /**
   * The organization a sign-in acts in (design.md §4). Given one: the wallet must be a
   * member, or joins as `member` where self sign-up is allowed (or `admitted` says the
   * caller may add it). Not given: the wallet's last context while still a member, else none.
   */
  async enterOrganization(
    tx: Executor,
    walletId: string,
    orgId: string | undefined,
    admitted = false,
  ): Promise<string | null> {
    if (orgId === undefined) {
      const wallet = await repo.findWallet(tx, { id: walletId });
      const last = wallet?.default_org_id ?? null;
      if (last && (await repo.activeRole(tx, last, walletId))) return last;
      return null;
    }
    const org = await repo.findOrganization(tx, orgId);
    if (!org) throw notFound('organization');
    if (!(await repo.activeRole(tx, orgId, walletId))) {
      if (!org.allow_self_signup && !admitted) {
        throw forbidden('this organization does not allow self sign-up');
      }
      const wallet = await repo.findWallet(tx, { id: walletId });
      await repo.insertMember(tx, {
        id: newId('member'),
        orgId,
        walletId,
        email: wallet?.email ?? null,
        name: wallet?.name ?? null,
        now: this.clock.now(),
      });
    }
    await repo.setDefaultOrganization(tx, walletId, orgId);
    return orgId;
  }

  /** Chooses the context and opens a session: the token response of design.md §4. */
  async signIn(
    tx: Executor,
    walletId: string,
    orgId: string | undefined,
    client: ClientContext,
    admitted = false,
  ): Promise<TokenResponse> {
    const context = await this.enterOrganization(tx, walletId, orgId, admitted);
    return this.sessions.issue(tx, { walletId, orgId: context, ...client });
  }
}
