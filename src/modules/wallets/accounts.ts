import type { Executor } from '../../db/pool.js';
import { addressForWalletId } from '../../lib/address.js';
import type { Clock } from '../../lib/clock.js';
import { conflict, forbidden, notFound } from '../../lib/errors.js';
import { selfSignupGrant, type RoleGrant } from '../../lib/grants.js';
import { newId } from '../../lib/ids.js';
import { isUniqueViolation } from '../../lib/pg-errors.js';
import type { AddressNotices } from './address-notices.js';
import type { Contact } from './contact.js';
import * as repo from './repo.js';

export interface NewAccount {
  email?: string | null;
  phoneNumber?: string | null;
  name?: string | null;
  passwordHash?: string | null;
  /** An EOA wallet's address is its EOA; every other wallet's is derived from its id. */
  address?: string;
  emailConfirmed?: boolean;
}

/** A credential to add; a password's hash lives on the wallet (`setPassword`). */
export interface NewCredential {
  type: repo.CredentialType;
  label: string;
  externalId: string | null;
  publicKey?: Uint8Array | null;
  signCount?: number;
  transports?: string[];
}

/**
 * What wallets ask of memberships (the members module implements it, src/container.ts wires
 * it): wallets sit below organizations and members, so they neither read organizations nor
 * write members themselves.
 */
export interface WalletMemberships {
  /** The live organization and whether it lets anyone sign up; null when there is none. */
  organizationEntry(
    exec: Executor,
    orgId: string,
  ): Promise<{ id: string; name: string; allow_self_signup: boolean } | null>;
  /** The wallet's active role in the organization, or null. */
  activeRole(exec: Executor, orgId: string, walletId: string): Promise<string | null>;
  /** An active membership joined at sign-in, with the role `requireGrant` let it have. */
  join(
    exec: Executor,
    m: {
      id: string;
      orgId: string;
      walletId: string;
      email: string | null;
      name: string | null;
      grant: RoleGrant;
      now: Date;
    },
  ): Promise<void>;
  /** Accepted invitations sent to this email, not bound yet, now belong to the wallet. */
  bindInvitations(exec: Executor, walletId: string, email: string, now: Date): Promise<void>;
}

export type { Confirmation, CredentialRow, CredentialType, WalletRow } from './repo.js';

const PASSWORD: NewCredential = { type: 'password', label: 'password', externalId: null };

/** The 409 (code 6) of a credential another wallet (or this one) has already. */
const ALREADY_REGISTERED: Record<repo.CredentialType, string> = {
  password: 'this wallet already has a password',
  passkey: 'this passkey is already registered',
  eoa: 'this crypto wallet is already linked to a wallet',
  google: 'this Google account is already linked to a wallet',
};

/**
 * Wallet records as the sign-up and sign-in flows of `auth` use them: making a wallet, its
 * addresses, its credentials, and the organization it acts in (joining it when self sign-up
 * allows). Knows nothing of sessions or tokens.
 */
export class Accounts {
  constructor(
    private readonly clock: Clock,
    readonly notices: AddressNotices,
    private readonly memberships: WalletMemberships,
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
    const credentialId = input.passwordHash
      ? await this.addCredential(tx, id, PASSWORD)
      : undefined;
    if (email && input.emailConfirmed) await this.memberships.bindInvitations(tx, id, email, now);
    return { id, address, credentialId };
  }

  /**
   * Confirms the wallet's address after a code proved it (see `repo.confirmAddress`) and
   * hands the wallet the invitations accepted for that email. `held` when another wallet
   * confirmed it first, even concurrently (the transaction is then unusable: the caller
   * refuses). `onFirstProof` runs when this proof is the address's first (`confirmed`),
   * before the invitations bind: what it clears of the wallet never touches those.
   */
  async confirmAddress(
    exec: Executor,
    walletId: string,
    channel: 'email' | 'sms',
    onFirstProof?: () => Promise<void>,
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
    if (outcome === 'confirmed' && onFirstProof) await onFirstProof();
    if (outcome === 'confirmed' && channel === 'email') {
      const wallet = await repo.findWallet(exec, { id: walletId });
      if (wallet?.email) await this.memberships.bindInvitations(exec, walletId, wallet.email, now);
    }
    return outcome;
  }

  /**
   * What a sign-up page shows before any passkey or wallet prompt: the organization's name,
   * when it allows self sign-up. Any other id (unknown, deleted, closed) is the same 404, so
   * the answer tells no more than that the organization takes sign-ups.
   */
  async openOrganization(exec: Executor, orgId: string): Promise<{ id: string; name: string }> {
    const org = await this.memberships.organizationEntry(exec, orgId);
    if (!org?.allow_self_signup) throw notFound('organization open to sign-up');
    return { id: orgId, name: org.name };
  }

  /**
   * Refuses early when a new wallet could not join `orgId`: 404 when it does not exist,
   * 403 when it does not allow self sign-up (unless `admitted` says the caller may add it).
   */
  async requireOpenOrganization(exec: Executor, orgId: string, admitted = false): Promise<void> {
    const org = await this.memberships.organizationEntry(exec, orgId);
    if (!org) throw notFound('organization');
    if (!org.allow_self_signup && !admitted) {
      throw forbidden('this organization does not allow self sign-up');
    }
  }

  /**
   * The organization a sign-in acts in (docs/auth.md, top). Given one: the wallet must be a
   * member, or joins with the role of `admitted` (a caller's grant that passed its ceiling,
   * src/lib/grants.ts) or, where self sign-up is allowed, as SELF_SIGNUP_ROLE. Not given:
   * the wallet's last context while still a member, else none.
   */
  async enterOrganization(
    tx: Executor,
    walletId: string,
    orgId: string | undefined,
    admitted: RoleGrant | null = null,
  ): Promise<string | null> {
    if (orgId === undefined) {
      const wallet = await repo.findWallet(tx, { id: walletId });
      const last = wallet?.default_org_id ?? null;
      if (last && (await this.memberships.activeRole(tx, last, walletId))) return last;
      return null;
    }
    const org = await this.memberships.organizationEntry(tx, orgId);
    if (!org) throw notFound('organization');
    if (!(await this.memberships.activeRole(tx, orgId, walletId))) {
      if (!org.allow_self_signup && !admitted) {
        throw forbidden('this organization does not allow self sign-up');
      }
      const wallet = await repo.findWallet(tx, { id: walletId });
      await this.memberships.join(tx, {
        id: newId('member'),
        orgId,
        walletId,
        email: wallet?.email ?? null,
        name: wallet?.name ?? null,
        grant: admitted ?? selfSignupGrant(),
        now: this.clock.now(),
      });
    }
    await repo.setDefaultOrganization(tx, walletId, orgId);
    return orgId;
  }

  async find(exec: Executor, walletId: string): Promise<repo.WalletRow | null> {
    return repo.findWallet(exec, { id: walletId });
  }

  /** The wallet that confirmed this address, if one did. */
  async holderOf(exec: Executor, address: Contact): Promise<repo.WalletRow | null> {
    return repo.findHolder(exec, address);
  }

  /** Wallets naming this address: its holder first, then the others, oldest first. */
  async naming(exec: Executor, address: Contact, limit: number): Promise<repo.WalletRow[]> {
    return repo.findNaming(exec, address, limit);
  }

  async credentials(exec: Executor, walletId: string): Promise<repo.CredentialRow[]> {
    return repo.listCredentials(exec, walletId);
  }

  /** The live credential of this type with this external id (passkey id, EOA, Google sub). */
  async credentialByExternalId(
    exec: Executor,
    type: repo.CredentialType,
    externalId: string,
  ): Promise<repo.CredentialRow | null> {
    return repo.findCredentialByExternalId(exec, type, externalId);
  }

  /**
   * Adds a credential to the wallet; answers its id. The callers look for the credential
   * first, but two requests adding the same one at once both pass that look: the second's
   * insert meets the unique index `credentials_external` and is answered 409 code 6, as the
   * look would have answered it (its transaction is then unusable: the caller refuses).
   */
  async addCredential(exec: Executor, walletId: string, c: NewCredential): Promise<string> {
    const id = newId('credential');
    try {
      await repo.insertCredential(exec, { ...c, id, walletId, now: this.clock.now() });
    } catch (err) {
      if (isUniqueViolation(err, 'credentials_external')) {
        throw conflict(ALREADY_REGISTERED[c.type]);
      }
      throw err;
    }
    return id;
  }

  /** Sets the wallet's password, and gives it a password credential when it had none. */
  async setPassword(exec: Executor, walletId: string, passwordHash: string): Promise<void> {
    await repo.setPasswordHash(exec, walletId, passwordHash, this.clock.now());
    const creds = await repo.listCredentials(exec, walletId);
    if (!creds.some((c) => c.type === 'password')) {
      await this.addCredential(exec, walletId, PASSWORD);
    }
  }

  /**
   * Removes every credential but those of the `keep` types (and the EOA that is the wallet's
   * own address); the password goes too unless kept.
   */
  async removeCredentialsExcept(
    exec: Executor,
    walletId: string,
    keep: repo.CredentialType[],
  ): Promise<void> {
    const now = this.clock.now();
    await repo.removeCredentialsExcept(exec, walletId, keep, now);
    if (!keep.includes('password')) await repo.setPasswordHash(exec, walletId, null, now);
  }

  /**
   * The wallet keeps only the address of `kept`'s channel, the one just proven (a
   * hand-over): any other address it named or held goes, with its confirmation, since it
   * was set up by whoever made the wallet. Answers the channels of the addresses dropped.
   */
  async keepOnlyAddress(
    exec: Executor,
    walletId: string,
    kept: 'email' | 'sms',
  ): Promise<('email' | 'sms')[]> {
    return repo.dropAddressesExcept(exec, walletId, kept, this.clock.now());
  }

  /** The wallet no longer signs in to any organization by default (a hand-over). */
  async clearDefaultOrganization(exec: Executor, walletId: string): Promise<void> {
    await repo.clearDefaultOrganization(exec, walletId, this.clock.now());
  }

  /** The passkey's signature counter after a sign-in with it. */
  async recordSignCount(exec: Executor, credentialId: string, signCount: number): Promise<void> {
    await repo.updateSignCount(exec, credentialId, signCount);
  }
}
