import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { MessageSender } from '../notify/sender.js';
import * as repo from './repo/codes.js';
import type { Channel, CodePurpose } from './repo/codes.js';

export type { Channel, CodePurpose };

export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_ATTEMPTS = 5;
/** Codes sent to one address for one purpose per hour, so nobody can flood an inbox. */
const MAX_CODES_PER_HOUR = 5;

const SUBJECTS: Record<CodePurpose, string> = {
  verification: 'Confirm your address',
  otp: 'Your sign-in code',
  password_reset: 'Reset your password',
};

/** Salted with the code's id: equal codes never share a hash. */
function hashCode(id: string, code: string): string {
  return createHash('sha256').update(`${id}:${code}`).digest('hex');
}

/**
 * Six-digit codes: stored hashed, single use, 10 minutes, 5 attempts. A new code for the
 * same address and purpose replaces the older ones.
 */
export class CodeStore {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly sender: MessageSender,
  ) {}

  /**
   * Makes and sends a code. Answers false (nothing sent) when the address already had its
   * hourly share; callers that must not reveal whether an account exists stay silent.
   */
  async send(input: {
    purpose: CodePurpose;
    walletId: string;
    channel: Channel;
    recipient: string;
  }): Promise<boolean> {
    const now = this.clock.now();
    const hourAgo = new Date(now.getTime() - 3_600_000);
    const sent = await repo.countSentSince(this.db, input.purpose, input.recipient, hourAgo);
    if (sent >= MAX_CODES_PER_HOUR) return false;

    const id = newId('code');
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    await repo.retireLive(this.db, input.purpose, input.recipient, now);
    await repo.insertCode(this.db, {
      ...input,
      id,
      codeHash: hashCode(id, code),
      expiresAt: new Date(now.getTime() + CODE_TTL_MS),
      now,
    });
    await this.sender.send({
      channel: input.channel,
      to: input.recipient,
      kind: input.purpose.replace('_', '-'),
      subject: SUBJECTS[input.purpose],
      text: `Your code is ${code}. It expires in 10 minutes. If you did not ask for it, ignore this message.`,
    });
    return true;
  }

  /**
   * Spends one attempt on the newest live code for this address and purpose. Answers the
   * wallet and channel when the code is right (the code is then used up), else null.
   * Each statement commits alone, so a failed attempt counts even when the caller fails.
   */
  async consume(input: {
    purpose: CodePurpose;
    recipient: string;
    code: string;
  }): Promise<{ walletId: string; channel: Channel } | null> {
    const now = this.clock.now();
    const row = await repo.spendAttempt(
      this.db,
      input.purpose,
      input.recipient,
      CODE_MAX_ATTEMPTS,
      now,
    );
    if (!row) return null;
    const given = Buffer.from(hashCode(row.id, input.code), 'hex');
    if (!timingSafeEqual(given, Buffer.from(row.code_hash, 'hex'))) return null;
    const used = await repo.markUsed(this.db, row.id, now);
    return used ? { walletId: row.wallet_id, channel: row.channel } : null;
  }
}
