import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import type { ClientContext } from '../../lib/client.js';
import { AppError, Code, invalid } from '../../lib/errors.js';
import {
  granterOf,
  mayGrant,
  requireGrant,
  SELF_SIGNUP_ROLE,
  type RoleGrant,
} from '../../lib/grants.js';
import type { AuthContext } from '../../lib/permissions.js';
import type { Executor } from '../../db/pool.js';
import { normaliseEmail, normalisePhone, oneContact, type Accounts } from '../wallets/index.js';
import { hashPassword } from './password.js';
import { requireRecentSignInOrKey } from './recent-sign-in.js';
import type { TokenResponse } from './session-service.js';
import type { SignIn } from './sign-in.js';

/** Sign-up with a password: a new wallet, signed in at once. */
export class SignUp {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
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
      return this.signIn.complete(tx, wallet.id, input.organization_id, {
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
   * `POST /wallets`: a password wallet in an existing organization, made by a caller acting
   * there with `members.create` and SELF_SIGNUP_ROLE within its own permissions
   * (src/lib/grants.ts), or by anyone when the organization allows self sign-up.
   */
  async createInOrganization(
    auth: AuthContext | null,
    input: { organization_id: string; email?: string; phone_number?: string; password: string },
    client: ClientContext,
  ): Promise<TokenResponse & { id: string }> {
    const contact = oneContact(input);
    const orgId = input.organization_id;
    const admitted = await this.callerGrant(auth, orgId);
    const passwordHash = await hashPassword(input.password);
    const created = await this.db.transaction(async (tx) => {
      const wallet = await this.accounts.createWallet(tx, {
        email: contact.email ?? null,
        phoneNumber: contact.phoneNumber ?? null,
        passwordHash,
      });
      const tokens = await this.signIn.complete(
        tx,
        wallet.id,
        orgId,
        { ...client, credentialId: wallet.credentialId },
        admitted,
      );
      return { id: wallet.id, ...tokens };
    });
    await this.accounts.notices.signedUp(created.id, [contact]);
    return created;
  }

  /**
   * The grant of a caller adding a wallet to `orgId`: a caller acting there with
   * `members.create` grants SELF_SIGNUP_ROLE when it is within its own permissions, and a
   * person only within minutes of a sign-in, as for an invitation (docs/auth.md, "Changing
   * credentials": the wallet made, with a password its maker chose, outlives the token). Anyone
   * else, or a caller over its ceiling, is refused unless the organization allows self
   * sign-up (then the wallet joins as anyone would, null here); the refusal of a caller
   * over its ceiling names what it lacks.
   */
  private async callerGrant(auth: AuthContext | null, orgId: string): Promise<RoleGrant | null> {
    const acting = auth !== null && auth.orgId === orgId && auth.permissions.has('members.create');
    const granted = { role: SELF_SIGNUP_ROLE };
    if (acting && mayGrant(granterOf(auth), granted)) {
      await this.accounts.requireOpenOrganization(this.db, orgId, true);
      const grant = requireGrant(granterOf(auth), granted);
      await requireRecentSignInOrKey(this.db, this.clock, auth, 'add a member');
      return grant;
    }
    await this.requireOpen(this.db, orgId, acting ? auth : null);
    return null;
  }

  private async requireOpen(exec: Executor, orgId: string, over: AuthContext | null) {
    try {
      await this.accounts.requireOpenOrganization(exec, orgId);
    } catch (err) {
      // Closed to self sign-up: say what the caller lacks rather than "not allowed".
      if (over !== null && err instanceof AppError && err.code === Code.PERMISSION_DENIED) {
        requireGrant(granterOf(over), { role: SELF_SIGNUP_ROLE });
      }
      throw err;
    }
  }
}
