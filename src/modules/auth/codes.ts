import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { tooManyRequests } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { networkOf } from '../../lib/client-network.js';
import type { MessageSender } from '../notify/index.js';
import * as repo from './repo/codes.js';
import type { Channel, CodePurpose } from './repo/codes.js';
import type { SignInThrottle } from './throttle.js';

export { CODE_PURPOSES } from './repo/codes.js';
export type { Channel, CodePurpose };

export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_ATTEMPTS = 5;
const HOUR_MS = 3_600_000;

/**
 * The allowances of docs/decisions.md ("Codes cannot be silenced"), per address and purpose,
 * per rolling hour. A requester (an anonymous client's network, or a signed-in wallet) may ask
 * this often, whether or not an account has the address; beyond it, 429 code 8.
 */
export const REQUESTS_PER_REQUESTER = 3;
export const REQUESTS_PER_SIGNED_IN_WALLET = 5;
/**
 * Codes an address receives per hour on requests from anyone who has not proven it (an inbox
 * is never flooded); beyond it, nothing is sent and the answer stays the same. It takes
 * three networks to use it up, and requests that are trusted never count against it.
 */
export const CODES_PER_RECIPIENT = 3 * REQUESTS_PER_REQUESTER;
/** A network from which the address was proven stays trusted for it this long. */
export const TRUSTED_FOR_MS = 30 * 24 * HOUR_MS;
/** Live codes one guess is tried against (a new code does not retire the older ones). */
export const MAX_LIVE_CODES = 10;

const SUBJECTS: Record<CodePurpose, string> = {
  verification: 'Confirm your address',
  otp: 'Your sign-in code',
  password_reset: 'Reset your password',
};

/** Salted with the code's id: equal codes never share a hash. */
function hashCode(id: string, code: string): string {
  return createHash('sha256').update(`${id}:${code}`).digest('hex');
}

/** Who asks for a code: a signed-in wallet, or an anonymous client at an address. */
export type CodeRequester = { walletId: string } | { ip: string | undefined };

function requesterKey(r: CodeRequester): string {
  return 'walletId' in r ? `wallet:${r.walletId}` : networkOf(r.ip);
}

/**
 * Six-digit codes: stored hashed, single use, 10 minutes, 5 attempts. Asking again never
 * cancels a code still valid; using one retires the others of its address and purpose.
 */
export class CodeStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sender: MessageSender,
    /** Counts wrong guesses per address across every account and purpose (`code:<address>`). */
    private readonly guesses: SignInThrottle,
  ) {}

  /**
   * A request for a code to `recipient`. It is counted for its requester whether or not an
   * account has the address (`walletId` null: nothing is sent), so its answers reveal nothing:
   * a requester over its share gets 429 code 8 either way. Answers whether a code was sent:
   * false when the account has none, or when requests by others who never proved the address
   * used up its hourly allowance (a trusted or signed-in requester is never stopped by it).
   */
  async send(input: {
    purpose: CodePurpose;
    recipient: string;
    channel: Channel;
    walletId: string | null;
    requester: CodeRequester;
  }): Promise<boolean> {
    const now = this.clock.now();
    const hourAgo = new Date(now.getTime() - HOUR_MS);
    const requester = requesterKey(input.requester);
    const signedIn = 'walletId' in input.requester;
    const { purpose, recipient } = input;
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const sent = await this.db.transaction(async (tx) => {
      await repo.lockRecipient(tx, purpose, recipient);
      await repo.pruneRequests(tx, hourAgo);
      const mine = await repo.requestsOf(tx, purpose, recipient, requester, hourAgo);
      const share = signedIn ? REQUESTS_PER_SIGNED_IN_WALLET : REQUESTS_PER_REQUESTER;
      if (mine.n >= share) {
        const retryMs = (mine.oldest?.getTime() ?? now.getTime()) + HOUR_MS - now.getTime();
        throw tooManyRequests(
          'too many codes asked for this address; try again later',
          Math.max(1, Math.ceil(retryMs / 1000)),
        );
      }
      const trusted =
        signedIn ||
        (await repo.isTrusted(tx, recipient, requester, new Date(now.getTime() - TRUSTED_FOR_MS)));
      let sent = input.walletId !== null;
      if (sent && !trusted) {
        sent =
          (await repo.untrustedSentSince(tx, purpose, recipient, hourAgo)) < CODES_PER_RECIPIENT;
      }
      await repo.insertRequest(tx, {
        id: newId('code'),
        purpose,
        recipient,
        requester,
        trusted,
        sent,
        now,
      });
      if (!sent || input.walletId === null) return false;

      const id = newId('code');
      await repo.insertCode(tx, {
        id,
        purpose,
        walletId: input.walletId,
        channel: input.channel,
        recipient,
        codeHash: hashCode(id, code),
        expiresAt: new Date(now.getTime() + CODE_TTL_MS),
        now,
      });
      return true;
    });
    // Sent once the counts are committed: the transaction holds the address's lock and a
    // connection, and a sender may be slow or need a connection of its own. A failed send
    // leaves a code nobody received, counted like one that was.
    if (sent) {
      await this.sender.send({
        channel: input.channel,
        to: recipient,
        kind: purpose.replace('_', '-'),
        subject: SUBJECTS[purpose],
        text: `Your code is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this message.`,
      });
    }
    return sent;
  }

  /**
   * Spends one attempt on each live code for this address and purpose (at most
   * MAX_LIVE_CODES) and answers the wallet and channel of the one that matches (it is then
   * used up, and the others retired), else null. Each statement commits alone, so a failed
   * attempt counts even when the caller fails. With `ip`, the client's network is trusted
   * for this address from now on (TRUSTED_FOR_MS).
   */
  async consume(input: {
    purpose: CodePurpose;
    recipient: string;
    code: string;
    ip?: string;
    /** Only this wallet's codes (a signed-in wallet confirming its address). */
    walletId?: string;
  }): Promise<{ walletId: string; channel: Channel } | null> {
    // Guesses at one address are counted together, whoever makes them: many accounts naming
    // an address nobody holds yet must not each guess their own codes unhindered (docs/auth.md,
    // "Codes"). A guess reserves its failure first and a right one gives it back.
    const guessKey = `code:${input.recipient}`;
    const wait = await this.guesses.reserve([guessKey]);
    if (wait > 0)
      throw tooManyRequests('too many wrong codes for this address; try again later', wait);
    const now = this.clock.now();
    const rows = await repo.spendAttempts(
      this.db,
      input.purpose,
      input.recipient,
      CODE_MAX_ATTEMPTS,
      MAX_LIVE_CODES,
      now,
      input.walletId ?? null,
    );
    let hit: repo.LiveCodeRow | null = null;
    for (const row of rows) {
      const given = Buffer.from(hashCode(row.id, input.code), 'hex');
      if (timingSafeEqual(given, Buffer.from(row.code_hash, 'hex')) && !hit) hit = row;
    }
    if (!hit || !(await repo.markUsed(this.db, hit.id, now))) return null;
    await this.guesses.release(guessKey, []);
    await repo.retireOthers(this.db, input.purpose, input.recipient, hit.id, now);
    if (input.ip) await this.trustRequester(input.recipient, input.ip);
    return { walletId: hit.wallet_id, channel: hit.channel };
  }

  /**
   * Someone at `ip` proved `recipient` (a code used, a password sign-in with it): requests
   * from that network for it are trusted for TRUSTED_FOR_MS.
   */
  async trustRequester(recipient: string, ip: string | undefined): Promise<void> {
    if (!ip) return; // an unknown address proves nothing about a network
    const now = this.clock.now();
    await repo.trust(
      this.db,
      recipient,
      networkOf(ip),
      now,
      new Date(now.getTime() - TRUSTED_FOR_MS),
    );
  }
}
