import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate } from '../../db/values.js';
import {
  failedPrecondition,
  forbidden,
  invalid,
  notFound,
  unauthenticated,
} from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import { hashPassword } from '../auth/password.js';
import type { TokenResponse } from '../auth/session-service.js';
import type { SessionManager } from '../auth/sessions.js';
import type { Accounts, ClientContext } from './accounts.js';
import { normaliseEmail, normalisePhone, oneContact } from './contact.js';
import * as repo from './repo.js';

export interface CredentialView {
  id: string;
  type: repo.CredentialType;
  label: string;
  when_created: string;
}

export interface WalletView {
  id: string;
  address: string;
  name: string | null;
  email: string | null;
  phone_number: string | null;
  email_confirmed: boolean;
  phone_confirmed: boolean;
  organization_id: string | null;
  roles: string[];
  credentials: CredentialView[];
  when_created: string;
}

const credentialView = (c: repo.CredentialRow): CredentialView => ({
  id: c.id,
  type: c.type,
  label: c.label,
  when_created: asDate(c.created_at).toISOString(),
});

/** Wallets of people: sign-up with a password, the signed-in wallet, its credentials. */
export class WalletService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly sessions: SessionManager,
  ) {}

  /**
   * `POST /organizations/wallets`: an unconfirmed account, standalone (in no organization) or,
   * with `organization_id`, a `member` of an organization that allows self sign-up.
   */
  async registerStandalone(
    input: {
      email?: string;
      phone_number?: string;
      password: string;
      name?: string;
      organization_id?: string;
    },
    client: ClientContext,
  ): Promise<TokenResponse> {
    if (input.email === undefined && input.phone_number === undefined) {
      throw invalid('email or phone_number is required', [
        { field: 'email', reason: 'email or phone_number is required' },
      ]);
    }
    const email = input.email === undefined ? null : normaliseEmail(input.email);
    const phoneNumber =
      input.phone_number === undefined ? null : normalisePhone(input.phone_number);
    // Refused before anything is made (or a password hashed) when the wallet could not join.
    if (input.organization_id !== undefined) {
      await this.accounts.requireOpenOrganization(this.db, input.organization_id);
    }
    const passwordHash = await hashPassword(input.password);
    const tokens = await this.db.transaction(async (tx) => {
      const wallet = await this.accounts.createWallet(tx, {
        email,
        phoneNumber,
        name: input.name?.trim() || null,
        passwordHash,
      });
      return this.accounts.signIn(tx, wallet.id, input.organization_id, {
        ...client,
        credentialId: wallet.credentialId,
      });
    });
    await this.accounts.notices.signedUp(tokens.wallet.id, [
      ...(email === null ? [] : [{ channel: 'email' as const, email }]),
      ...(phoneNumber === null ? [] : [{ channel: 'sms' as const, phoneNumber }]),
    ]);
    return tokens;
  }

  /**
   * `POST /wallets`: a password wallet in an existing organization, made by a caller with
   * `members.create` there or by anyone when the organization allows self sign-up.
   */
  async createInOrganization(
    auth: AuthContext | null,
    input: { organization_id: string; email?: string; phone_number?: string; password: string },
    client: ClientContext,
  ): Promise<TokenResponse & { id: string }> {
    const contact = oneContact(input);
    const org = await repo.findOrganization(this.db, input.organization_id);
    if (!org) throw notFound('organization');
    const admitted =
      auth !== null && auth.orgId === org.id && auth.permissions.has('members.create');
    if (!admitted && !org.allow_self_signup) {
      throw forbidden('this organization does not allow self sign-up');
    }
    const passwordHash = await hashPassword(input.password);
    const created = await this.db.transaction(async (tx) => {
      const wallet = await this.accounts.createWallet(tx, {
        email: contact.email ?? null,
        phoneNumber: contact.phoneNumber ?? null,
        passwordHash,
      });
      const tokens = await this.accounts.signIn(
        tx,
        wallet.id,
        org.id,
        { ...client, credentialId: wallet.credentialId },
        admitted,
      );
      return { id: wallet.id, ...tokens };
    });
    await this.accounts.notices.signedUp(created.id, [contact]);
    return created;
  }

  /** `GET /wallets/me`. */
  async me(auth: AuthContext): Promise<WalletView> {
    const wallet = await repo.findWallet(this.db, { id: auth.walletId });
    if (!wallet) throw unauthenticated('wallet not found');
    const creds = await repo.listCredentials(this.db, wallet.id);
    return {
      id: wallet.id,
      address: wallet.address,
      name: wallet.name,
      email: wallet.email,
      phone_number: wallet.phone_number,
      email_confirmed: wallet.email_confirmed_at !== null,
      phone_confirmed: wallet.phone_confirmed_at !== null,
      organization_id: auth.orgId,
      roles: auth.role ? [auth.role] : [],
      credentials: creds.map(credentialView),
      when_created: asDate(wallet.created_at).toISOString(),
    };
  }

  async credentials(auth: AuthContext): Promise<CredentialView[]> {
    return (await repo.listCredentials(this.db, auth.walletId)).map(credentialView);
  }

  /**
   * Removes one credential. Refused (400 code 9) for the last one the wallet can sign in
   * with, and for the EOA that is the wallet's own address (the address never changes).
   * The sessions it opened end, but the caller's own. From the commit on it signs no action
   * on any process: the event bus checks the credential where it applies each action.
   */
  async removeCredential(auth: AuthContext, credentialId: string): Promise<void> {
    const ended = await this.db.transaction(async (tx) => {
      // Locking the wallet row serialises two removals that would each leave one.
      const wallet = await repo.findWallet(tx, { id: auth.walletId }, true);
      if (!wallet) throw unauthenticated('wallet not found');
      const creds = await repo.listCredentials(tx, wallet.id);
      const target = creds.find((c) => c.id === credentialId);
      if (!target) throw notFound('credential');
      if (creds.length <= 1) {
        throw failedPrecondition('cannot remove the last credential this wallet signs in with');
      }
      if (target.type === 'eoa' && target.external_id === wallet.address) {
        throw failedPrecondition("cannot remove the crypto wallet that is this wallet's address");
      }
      const now = this.clock.now();
      await repo.removeCredential(tx, wallet.id, target.id, now);
      if (target.type === 'password') await repo.setPasswordHash(tx, wallet.id, null, now);
      return this.sessions.endOpenedWith(tx, wallet.id, target.id, auth.sessionId);
    });
    this.sessions.forget(ended);
  }
}
