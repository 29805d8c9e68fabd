import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { BaseLogger } from 'pino';
import type { Db } from '../../db/pool.js';
import type { ClientContext } from '../../lib/client.js';
import type { Clock } from '../../lib/clock.js';
import { failedPrecondition, unauthenticated } from '../../lib/errors.js';
import type { Accounts } from '../wallets/index.js';
import { linkedOrCreated } from './first-sign-in.js';
import { spendIdToken } from './repo/challenges.js';
import type { TokenResponse } from './session-service.js';
import type { SignIn } from './sign-in.js';

export interface GoogleConfig {
  jwksUrl: string;
  clientIds: string[];
  issuers: string[];
}

/** Asymmetric algorithms only: an HMAC token "signed" with a public key never verifies. */
const ALGORITHMS = ['RS256', 'ES256'];
const REFUSED = 'Google ID token refused';
const JWS_COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Google sign-in: the ID token is verified against Google's published keys (a JWKS URL
 * from configuration): signature, issuer, audience (our client ids), expiry at the
 * injected clock's time, and a verified email. A token signs in once: one seen again (a
 * copy from a log, a proxy or a browser's history) is refused until it expires.
 */
export class GoogleSignIn {
  private jwks: ReturnType<typeof createRemoteJWKSet> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
    private readonly config: GoogleConfig,
    private readonly log: BaseLogger,
  ) {}

  private async verifyIdToken(
    idToken: string,
  ): Promise<{ sub: string; email: string; expiresAt: Date }> {
    if (this.config.clientIds.length === 0) {
      throw failedPrecondition('Google sign-in is not configured on this service');
    }
    // Three base64url parts, nothing else (a JWS in compact form).
    if (!JWS_COMPACT.test(idToken)) throw unauthenticated(REFUSED);
    this.jwks ??= createRemoteJWKSet(new URL(this.config.jwksUrl), { timeoutDuration: 5_000 });
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.jwks, {
        algorithms: ALGORITHMS,
        issuer: this.config.issuers,
        audience: this.config.clientIds,
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch (err) {
      this.log.info(
        { reason: (err as { code?: string }).code ?? 'invalid' },
        'Google token refused',
      );
      throw unauthenticated(REFUSED);
    }
    const { sub, email } = payload;
    if (typeof sub !== 'string' || sub.length === 0 || sub.length > 255) {
      throw unauthenticated(REFUSED);
    }
    if (typeof email !== 'string' || email.length > 254 || payload.email_verified !== true) {
      throw unauthenticated('the Google account has no verified email address');
    }
    return { sub, email: email.trim().toLowerCase(), expiresAt: new Date(payload.exp! * 1000) };
  }

  /**
   * Signs in the wallet of this Google account: the one it is linked to, else the wallet
   * whose confirmed email it is (linked now), else a new wallet with that email confirmed.
   */
  async connect(
    input: { id_token: string; organization_id?: string },
    client: ClientContext,
  ): Promise<TokenResponse> {
    const { sub, email, expiresAt } = await this.verifyIdToken(input.id_token);
    // Keyed by what the signature covers (header.payload), not by the string as sent: the
    // signature part decodes loosely (spaces, padding, a last character's unused bits), so
    // one token has many spellings, all of them the same sign-in.
    const signed = input.id_token.slice(0, input.id_token.lastIndexOf('.'));
    const tokenHash = createHash('sha256').update(signed).digest();
    return this.db.transaction(async (tx) => {
      if (!(await spendIdToken(tx, tokenHash, expiresAt, this.clock.now()))) {
        throw unauthenticated('this Google ID token was used already; sign in with Google again');
      }
      const { walletId, credentialId } = await linkedOrCreated(
        tx,
        this.accounts,
        { type: 'google', externalId: sub },
        async (sp) => {
          // Only the wallet that proved the email is linked. Wallets that merely name it were
          // made by someone who never proved it (perhaps not its owner): Google's proof makes
          // a new wallet that holds the email, and theirs can then never confirm it.
          const holder = await this.accounts.holderOf(sp, { channel: 'email', email });
          // Making a wallet is a sign-up: counted as one, and refused over the limit.
          if (!holder) await client.admitSignUp?.();
          const walletId =
            holder?.id ??
            (await this.accounts.createWallet(sp, { email, emailConfirmed: true })).id;
          const credentialId = await this.accounts.addCredential(sp, walletId, {
            type: 'google',
            label: email,
            externalId: sub,
          });
          return { walletId, credentialId };
        },
      );
      return this.signIn.complete(tx, walletId, input.organization_id, {
        ...client,
        credentialId,
      });
    });
  }
}
