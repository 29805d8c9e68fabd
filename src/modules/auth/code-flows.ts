import type { Db, Executor } from '../../db/pool.js';
import type { ClientContext } from '../../lib/client.js';
import { failedPrecondition, invalid, tooManyRequests, unauthenticated } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import {
  normaliseEmail,
  oneContact,
  recipientOf,
  type Accounts,
  type Confirmation,
  type Contact,
  type CredentialType,
} from '../wallets/index.js';
import type { CodeStore } from './codes.js';
import type { HandOver, HandOverReceipt } from './hand-over.js';
import { hashPassword } from './password.js';
import type { TokenResponse } from './session-service.js';
import type { SessionManager } from './sessions.js';
import type { SignIn } from './sign-in.js';

const WRONG_CODE = 'invalid or expired code';

/**
 * Every way a code proves an address, and whether the address's first proof hands the wallet
 * over (`HandOver`): it does when the code comes from someone not signed in, since whoever
 * made the wallet never proved the address; it does not when the signed-in wallet proves its
 * own address. test/organizations/hand-over.test.ts runs each row and refuses a new code route not listed.
 */
export const ADDRESS_PROOFS = [
  { route: 'POST /auth/otp/verify', channel: 'email', handsOver: true },
  { route: 'POST /auth/otp/verify', channel: 'sms', handsOver: true },
  { route: 'POST /auth/password-reset/confirm', channel: 'email', handsOver: true },
  { route: 'POST /auth/verify', channel: 'email', handsOver: false },
  { route: 'POST /auth/verify', channel: 'sms', handsOver: false },
] as const;

/**
 * Flows built on one-time codes: confirming an address, password reset and one-time-code
 * sign-in. The public ones answer the same whether or not the account exists.
 */
export class CodeFlows {
  constructor(
    private readonly db: Db,
    private readonly codes: CodeStore,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
    private readonly sessions: SessionManager,
    private readonly handOver: HandOver,
  ) {}

  /** `POST /auth/verification-code`: a new code to the unconfirmed address of the caller. */
  async sendVerification(auth: AuthContext): Promise<void> {
    const wallet = await this.accounts.find(this.db, auth.walletId);
    if (!wallet) throw unauthenticated('wallet not found');
    let target: Contact | null = null;
    if (wallet.email && !wallet.email_confirmed_at) {
      target = { channel: 'email', email: wallet.email };
    } else if (wallet.phone_number && !wallet.phone_confirmed_at) {
      target = { channel: 'sms', phoneNumber: wallet.phone_number };
    }
    if (!target) {
      throw failedPrecondition(
        wallet.email || wallet.phone_number
          ? 'this account is already confirmed'
          : 'this account has no email address or phone number to confirm',
      );
    }
    const holder = await this.accounts.holderOf(this.db, target);
    // Another wallet proved this address: a code could never confirm it here, so its holder
    // is told instead, and the caller gets the same answer (and limit) as for a code.
    const sent =
      holder && holder.id !== wallet.id
        ? await this.accounts.notices.send(target, 'confirmation-attempt')
        : await this.codes.send({
            purpose: 'verification',
            walletId: wallet.id,
            channel: target.channel,
            recipient: recipientOf(target),
            requester: { walletId: wallet.id },
          });
    if (!sent) throw tooManyRequests('too many codes sent to this address; try again later', 3600);
  }

  /** `POST /auth/verify`: confirms the caller's address with the code sent to it. */
  async verify(auth: AuthContext, code: string): Promise<void> {
    const wallet = await this.accounts.find(this.db, auth.walletId);
    if (!wallet) throw unauthenticated('wallet not found');
    const candidates = [
      wallet.email && !wallet.email_confirmed_at ? wallet.email : null,
      wallet.phone_number && !wallet.phone_confirmed_at ? wallet.phone_number : null,
    ].filter((r): r is string => r !== null);
    if (candidates.length === 0) throw failedPrecondition('this account is already confirmed');
    for (const recipient of candidates) {
      // Only this wallet's codes: a guess must not spend the attempts of another wallet's
      // code for the same address (one that only names it could wear out the owner's).
      const hit = await this.codes.consume({
        purpose: 'verification',
        recipient,
        code,
        walletId: wallet.id,
      });
      if (hit && hit.walletId === wallet.id) {
        const proof = await this.db.transaction((tx) =>
          this.accounts.confirmAddress(tx, wallet.id, hit.channel),
        );
        if (proof === 'confirmed' || proof === 'already') return;
        break; // another wallet confirmed the address since the code was sent
      }
    }
    throw invalid(WRONG_CODE, [{ field: 'code', reason: 'is wrong, used or expired' }]);
  }

  /** `POST /auth/password-reset`: sends a code when the account exists; answers alike. */
  async requestPasswordReset(rawEmail: string, client: ClientContext): Promise<void> {
    const email = normaliseEmail(rawEmail);
    const wallet = await this.accountOf({ channel: 'email', email });
    // Counted for the requester even without an account (codes.ts), so answers stay alike.
    await this.codes.send({
      purpose: 'password_reset',
      walletId: wallet?.id ?? null,
      channel: 'email',
      recipient: email,
      requester: { ip: client.ip },
    });
  }

  /**
   * `POST /auth/password-reset/confirm`: sets the new password, ends every session of the
   * wallet and opens a new one (the only one left). When the code is the first proof of the
   * address, the wallet is handed over (`HandOver`) and keeps only the new password.
   */
  async confirmPasswordReset(
    input: { email: string; code: string; password: string },
    client: ClientContext,
  ): Promise<TokenResponse> {
    const email = normaliseEmail(input.email);
    const hit = await this.codes.consume({
      purpose: 'password_reset',
      recipient: email,
      code: input.code,
      ip: client.ip,
    });
    if (!hit) throw unauthenticated(WRONG_CODE);
    const passwordHash = await hashPassword(input.password);
    const { response, ended } = await this.db.transaction(async (tx) => {
      // The code proved control of the address.
      const { proof, receipt } = await this.prove(tx, hit.walletId, 'email', ['password']);
      if (proof === 'held' || proof === 'none') throw unauthenticated(WRONG_CODE);
      await this.accounts.setPassword(tx, hit.walletId, passwordHash);
      const rest = await this.sessions.endAllOf(tx, hit.walletId, 'password_reset');
      const response = await this.signIn.complete(tx, hit.walletId, undefined, client);
      return { response, ended: withSessions(receipt, rest) };
    });
    this.handOver.forget(ended);
    return response;
  }

  /** `POST /auth/otp`: a sign-in code to the account's address; answers alike either way. */
  async requestOtp(
    input: { email?: string; phone_number?: string },
    client: ClientContext,
  ): Promise<void> {
    const contact = oneContact(input);
    const wallet = await this.accountOf(contact);
    await this.codes.send({
      purpose: 'otp',
      walletId: wallet?.id ?? null,
      channel: contact.channel,
      recipient: recipientOf(contact),
      requester: { ip: client.ip },
    });
  }

  /**
   * `POST /auth/otp/verify`: signs in with the code; it also confirms the address. When it is
   * the first proof of the address, the wallet is handed over (`HandOver`): its password and
   * other credentials, sessions, API keys and memberships go.
   */
  async verifyOtp(
    input: { email?: string; phone_number?: string; code: string; organization_id?: string },
    client: ClientContext,
  ): Promise<TokenResponse> {
    const contact = oneContact(input);
    const hit = await this.codes.consume({
      purpose: 'otp',
      recipient: recipientOf(contact),
      code: input.code,
      ip: client.ip,
    });
    if (!hit) throw unauthenticated(WRONG_CODE);
    const { response, receipt } = await this.db.transaction(async (tx) => {
      const { proof, receipt } = await this.prove(tx, hit.walletId, hit.channel, []);
      if (proof === 'held' || proof === 'none') throw unauthenticated(WRONG_CODE);
      const response = await this.signIn.complete(tx, hit.walletId, input.organization_id, client);
      return { response, receipt };
    });
    this.handOver.forget(receipt);
    return response;
  }

  /**
   * The account a sign-in code for this address is for: the wallet that confirmed it, else the
   * oldest that names it (a later sign-up cannot redirect the codes of an earlier one).
   */
  private async accountOf(contact: Contact) {
    return (await this.accounts.naming(this.db, contact, 1))[0] ?? null;
  }

  /**
   * Confirms the address a code from someone not signed in proved. When it is the address's
   * first proof, the wallet is handed over (all but the `keep` credential types go) before
   * the invitations accepted for the address bind to it.
   */
  private async prove(
    tx: Executor,
    walletId: string,
    channel: 'email' | 'sms',
    keep: CredentialType[],
  ): Promise<{ proof: Confirmation; receipt: HandOverReceipt }> {
    let receipt: HandOverReceipt = { sessionIds: [], apiKeyIds: [] };
    const proof = await this.accounts.confirmAddress(tx, walletId, channel, async () => {
      receipt = await this.handOver.clear(tx, walletId, channel, keep);
    });
    return { proof, receipt };
  }
}

function withSessions(receipt: HandOverReceipt, ended: { id: string }[]): HandOverReceipt {
  return { ...receipt, sessionIds: [...receipt.sessionIds, ...ended.map((s) => s.id)] };
}
