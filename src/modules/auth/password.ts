import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import { tooManyRequests, unauthenticated } from '../../lib/errors.js';
import { clientSubject } from '../../lib/client-network.js';
import type { ClientContext } from '../../lib/client.js';
import { oneContact, recipientOf, type Accounts, type Contact } from '../wallets/index.js';
import type { TokenResponse } from './session-service.js';
import type { SignIn } from './sign-in.js';
import type { CodeStore } from './codes.js';
import type { SignInThrottle } from './throttle.js';

// argon2id, m = 19 MiB, t = 2, p = 1 (docs/architecture.md, "Choices of the stack"). `Algorithm` is
// a const enum, which isolatedModules cannot read, hence the literal.
const ARGON2 = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

let dummyHash: Promise<string> | null = null;

/** Wallets whose password one sign-in attempt checks (see `walletWithPassword`). */
export const MAX_PASSWORD_CANDIDATES = 5;

/**
 * Checks a password against a stored hash. With no hash (unknown account, or a wallet
 * without a password) it still hashes once against a dummy, so the answer takes as long.
 */
export async function checkPassword(stored: string | null, password: string): Promise<boolean> {
  if (!stored) {
    dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
    await verify(await dummyHash, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/**
 * What checks a password against a stored hash for sign-in (`checkPassword` in the service;
 * a test wraps it to count how many hashes an attack reaches).
 */
export interface PasswordChecker {
  check(stored: string | null, password: string): Promise<boolean>;
}

export const argon2Checker = (): PasswordChecker => ({ check: checkPassword });

export interface LoginInput {
  email?: string;
  phone_number?: string;
  password: string;
  organization_id?: string;
}

/** `POST /auth/login`: password sign-in with per-account and per-address throttling. */
export class PasswordLogin {
  constructor(
    private readonly db: Db,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
    private readonly throttle: SignInThrottle,
    /** The code allowances trust a network the address was proven from (codes.ts). */
    private readonly codes: Pick<CodeStore, 'trustRequester'>,
    readonly checker: PasswordChecker = argon2Checker(),
  ) {}

  async login(input: LoginInput, client: ClientContext): Promise<TokenResponse> {
    const contact = oneContact(input);
    const accountKey = `account:${recipientOf(contact)}`;
    const addressKeys = client.ip ? [clientSubject(client.ip)] : [];
    // The failure is counted before the hash (and given back when the password is right),
    // so concurrent guesses cannot all pass a check made before any of them was counted.
    const wait = await this.throttle.reserve([accountKey, ...addressKeys]);
    if (wait > 0) throw tooManyRequests('too many failed sign-ins; try again later', wait);

    const wallet = await this.walletWithPassword(contact, input.password);
    if (!wallet) {
      // One answer for an unknown account and a wrong password; the reservation stays.
      throw unauthenticated('wrong email, phone number or password');
    }
    const proven =
      contact.channel === 'email' ? wallet.email_confirmed_at : wallet.phone_confirmed_at;
    if (proven) {
      // The holder of the address: the failures counted for it are forgiven, and this
      // network is marked as its owner's.
      await this.throttle.release(accountKey, addressKeys);
      await this.codes.trustRequester(recipientOf(contact), client.ip);
    } else {
      // A wallet that only names the address (anyone can make one, with a password of their
      // own): its sign-in forgives only itself, never the guesses at the holder's password.
      await this.throttle.giveBack([accountKey, ...addressKeys]);
    }
    return this.db.transaction(async (tx) => {
      const creds = await this.accounts.credentials(tx, wallet.id);
      const credentialId = creds.find((c) => c.type === 'password')?.id;
      return this.signIn.complete(tx, wallet.id, input.organization_id, {
        ...client,
        credentialId,
      });
    });
  }

  /**
   * The wallet naming this address whose password this is. Several wallets may name an
   * address (only one can have confirmed it), and each signs in with its own password: a
   * sign-up with a taken address must work like any other, or signing in would tell that the
   * address was taken. The holder is tried first, then the oldest others, at most
   * MAX_PASSWORD_CANDIDATES hashes per attempt.
   */
  private async walletWithPassword(contact: Contact, password: string) {
    const candidates = await this.accounts.naming(this.db, contact, MAX_PASSWORD_CANDIDATES);
    if (candidates.length === 0) {
      await this.checker.check(null, password);
      return null;
    }
    for (const wallet of candidates) {
      if (await this.checker.check(wallet.password_hash, password)) return wallet;
    }
    return null;
  }
}
