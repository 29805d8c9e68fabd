import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { BaseLogger } from 'pino';
import type { Db, Executor } from '../../db/pool.js';
import { unpadCredential } from '../../lib/base64url.js';
import type { ClientContext } from '../../lib/client.js';
import type { Clock } from '../../lib/clock.js';
import { conflict, unauthenticated } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import type { Accounts } from '../wallets/index.js';
import {
  insertPasskeyChallenge,
  takePasskeyChallenge,
  type PasskeyPurpose,
} from './repo/challenges.js';
import type { TokenResponse } from './session-service.js';
import { requireRecentSignIn } from './recent-sign-in.js';
import type { SignIn } from './sign-in.js';

export const PASSKEY_TIMEOUT_MS = 5 * 60_000;
/** ES256 and RS256 (docs/auth.md, "The four ways in"). */
const ALGORITHMS = [-7, -257];

/** The library's options with an integer timeout (docs/auth.md, "The four ways in"). */
export type CreationOptions = PublicKeyCredentialCreationOptionsJSON & {
  timeout: number;
  rp: { id: string; name: string };
  authenticatorSelection: { residentKey: string; userVerification: string };
};
export type RequestOptions = PublicKeyCredentialRequestOptionsJSON & {
  timeout: number;
  rpId: string;
  userVerification: string;
};

export interface WebauthnConfig {
  rpId: string;
  rpName: string;
  origins: string[];
}

const FAILED = 'passkey verification failed';

/** The challenge the browser signed, read from the credential's own clientDataJSON. */
function challengeOf(credential: { response: { clientDataJSON: string } }): string {
  try {
    const data = JSON.parse(
      Buffer.from(credential.response.clientDataJSON, 'base64url').toString('utf8'),
    ) as {
      challenge?: unknown;
    };
    // The challenges this service issues are base64url: anything else (a NUL, which
    // PostgreSQL's text refuses, included) is no challenge of ours.
    if (typeof data.challenge === 'string' && /^[A-Za-z0-9_-]{1,512}$/.test(data.challenge)) {
      return data.challenge;
    }
  } catch {
    // fall through
  }
  throw unauthenticated(FAILED);
}

/**
 * Passkey ceremonies (docs/auth.md, "The four ways in"). Pending challenges live in
 * `webauthn_challenges` and are found from the credential's clientDataJSON, so no cookie
 * or server session is needed. Each is spent before verification, outside the transaction
 * that follows, so a failed or replayed response can never try the same challenge again.
 */
export class PasskeyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
    private readonly config: WebauthnConfig,
    private readonly log: BaseLogger,
  ) {}

  /** Options to create a new wallet's passkey (`GET …/register/options`). */
  async registerOptions(): Promise<CreationOptions> {
    const options = await this.creationOptions([]);
    await this.storeChallenge(options.challenge, 'register', null);
    return options;
  }

  /** Verifies the new credential, creates the wallet in the organization and signs in. */
  /** The organization a sign-up would join, when it allows self sign-up (else 404). */
  openOrganization(orgId: string): Promise<{ id: string; name: string }> {
    return this.accounts.openOrganization(this.db, orgId);
  }

  async registerVerify(
    sent: RegistrationResponseJSON,
    orgId: string | undefined,
    client: ClientContext,
  ): Promise<TokenResponse> {
    // Without an organization: a standalone wallet, as a password sign-up makes (issue 32).
    // With one, it joins: refuse before spending the challenge when it cannot.
    if (orgId !== undefined) await this.accounts.requireOpenOrganization(this.db, orgId);
    const credential = unpadCredential(sent);
    const challenge = challengeOf(credential);
    await this.consumeChallenge(this.db, challenge, 'register', null);
    const verified = await this.verifyRegistration(credential, challenge);
    return this.db.transaction(async (tx) => {
      const wallet = await this.accounts.createWallet(tx, {});
      const credentialId = await this.saveCredential(tx, wallet.id, verified);
      return this.signIn.complete(tx, wallet.id, orgId, { ...client, credentialId });
    });
  }

  /** Options for signing in with a discoverable credential (`GET …/login/options`). */
  async loginOptions(): Promise<RequestOptions> {
    const options = await generateAuthenticationOptions({
      rpID: this.config.rpId,
      userVerification: 'required',
      timeout: PASSKEY_TIMEOUT_MS,
    });
    await this.storeChallenge(options.challenge, 'login', null);
    return {
      ...options,
      rpId: this.config.rpId,
      userVerification: 'required',
      timeout: PASSKEY_TIMEOUT_MS,
    };
  }

  async loginVerify(
    sent: AuthenticationResponseJSON,
    orgId: string | undefined,
    client: ClientContext,
  ): Promise<TokenResponse> {
    // Stored credential ids are unpadded: a padded id would otherwise find nothing.
    const credential = unpadCredential(sent);
    const challenge = challengeOf(credential);
    await this.consumeChallenge(this.db, challenge, 'login', null);
    const stored = await this.accounts.credentialByExternalId(this.db, 'passkey', credential.id);
    if (!stored?.public_key) throw unauthenticated(FAILED);
    let newCounter: number;
    try {
      const result = await verifyAuthenticationResponse({
        response: credential,
        expectedChallenge: challenge,
        expectedOrigin: this.config.origins,
        expectedRPID: this.config.rpId,
        requireUserVerification: true,
        credential: {
          id: credential.id,
          publicKey: new Uint8Array(stored.public_key),
          counter: Number(stored.sign_count),
          transports: stored.transports,
        },
      });
      if (!result.verified) throw new Error('not verified');
      newCounter = result.authenticationInfo.newCounter;
    } catch (err) {
      this.log.info({ reason: (err as Error).message }, 'passkey assertion refused');
      throw unauthenticated(FAILED);
    }
    return this.db.transaction(async (tx) => {
      await this.accounts.recordSignCount(tx, stored.id, newCounter);
      return this.signIn.complete(tx, stored.wallet_id, orgId, {
        ...client,
        credentialId: stored.id,
      });
    });
  }

  /** Options to add a passkey to the signed-in wallet (its existing ones excluded). */
  async linkOptions(auth: AuthContext): Promise<CreationOptions> {
    await requireRecentSignIn(this.db, this.clock, auth);
    const existing = (await this.accounts.credentials(this.db, auth.walletId))
      .filter((c) => c.type === 'passkey' && c.external_id)
      .map((c) => ({ id: c.external_id!, transports: c.transports }));
    const options = await this.creationOptions(existing);
    await this.storeChallenge(options.challenge, 'link', auth.walletId);
    return options;
  }

  async linkVerify(auth: AuthContext, sent: RegistrationResponseJSON): Promise<{ id: string }> {
    const credential = unpadCredential(sent);
    const challenge = challengeOf(credential);
    await this.consumeChallenge(this.db, challenge, 'link', auth.walletId);
    const verified = await this.verifyRegistration(credential, challenge);
    const added = await this.db.transaction(async (tx) => {
      await requireRecentSignIn(tx, this.clock, auth);
      return { id: await this.saveCredential(tx, auth.walletId, verified) };
    });
    await this.accounts.notices.credentialChanged(auth.walletId, 'passkey-added');
    return added;
  }

  private async creationOptions(
    exclude: { id: string; transports: string[] }[],
  ): Promise<CreationOptions> {
    const options = await generateRegistrationOptions({
      rpName: this.config.rpName,
      rpID: this.config.rpId,
      userName: 'ONS wallet',
      userDisplayName: 'ONS wallet',
      userID: new Uint8Array(randomBytes(16)),
      attestationType: 'none',
      timeout: PASSKEY_TIMEOUT_MS,
      excludeCredentials: exclude,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    return {
      ...options,
      rp: { id: this.config.rpId, name: this.config.rpName },
      authenticatorSelection: {
        ...options.authenticatorSelection,
        residentKey: 'required',
        userVerification: 'required',
      },
      timeout: PASSKEY_TIMEOUT_MS,
    };
  }

  private async verifyRegistration(credential: RegistrationResponseJSON, challenge: string) {
    try {
      const result = await verifyRegistrationResponse({
        response: credential,
        expectedChallenge: challenge,
        expectedOrigin: this.config.origins,
        expectedRPID: this.config.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      });
      if (!result.verified) throw new Error('not verified');
      return result.registrationInfo.credential;
    } catch (err) {
      this.log.info({ reason: (err as Error).message }, 'passkey registration refused');
      throw unauthenticated(FAILED);
    }
  }

  private async saveCredential(
    tx: Executor,
    walletId: string,
    c: { id: string; publicKey: Uint8Array; counter: number; transports?: string[] },
  ): Promise<string> {
    if (await this.accounts.credentialByExternalId(tx, 'passkey', c.id)) {
      throw conflict('this passkey is already registered');
    }
    return this.accounts.addCredential(tx, walletId, {
      type: 'passkey',
      label: 'passkey',
      externalId: c.id,
      publicKey: c.publicKey,
      signCount: c.counter,
      transports: (c.transports ?? []).slice(0, 8),
    });
  }

  private async storeChallenge(
    challenge: string,
    purpose: PasskeyPurpose,
    walletId: string | null,
  ) {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + PASSKEY_TIMEOUT_MS);
    await insertPasskeyChallenge(this.db, { challenge, purpose, walletId, expiresAt }, now);
  }

  private async consumeChallenge(
    exec: Executor,
    challenge: string,
    purpose: PasskeyPurpose,
    walletId: string | null,
  ): Promise<void> {
    const now = this.clock.now();
    if (!(await takePasskeyChallenge(exec, challenge, purpose, walletId, now))) {
      throw unauthenticated(FAILED);
    }
  }
}
