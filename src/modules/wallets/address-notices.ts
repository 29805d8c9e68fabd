import type { BaseLogger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { MessageSender } from '../notify/index.js';
import { recipientOf, type Contact } from './contact.js';
import { countNoticesSince, findHolder, findWallet, insertNotice } from './repo.js';

/** Notices an address gets of one kind per hour, like codes (codes.ts). */
export const MAX_NOTICES_PER_HOUR = 5;

export type NoticeKind =
  | 'sign-up-attempt'
  | 'confirmation-attempt'
  | 'passkey-added'
  | 'eoa-linked'
  | 'credential-removed';

/** The credential changes its holder's addresses are told of (credentialChanged). */
export type CredentialChange = Extract<
  NoticeKind,
  'passkey-added' | 'eoa-linked' | 'credential-removed'
>;

const IF_NOT_YOU =
  'If it was you, there is nothing to do. If not, someone is signed in to your account: ' +
  'reset your password, end the sessions you do not know (Sessions) and remove what you did ' +
  'not add.';

const MESSAGES: Record<NoticeKind, { subject: string; text: string }> = {
  'sign-up-attempt': {
    subject: 'Someone signed up with your address',
    text:
      'An account was just created with this address. It cannot use the address: it gets no ' +
      'codes, invitations or anything else meant for it, and your account is unchanged.\n\n' +
      'If it was you, sign in to the account you already have (or reset its password). ' +
      'Otherwise there is nothing to do.',
  },
  'confirmation-attempt': {
    subject: 'Someone asked to confirm your address',
    text:
      'Another account asked for a code to confirm this address. The address is already ' +
      'confirmed for your account, so no code was sent and your account is unchanged. ' +
      'There is nothing to do.',
  },
  'passkey-added': {
    subject: 'A passkey was added to your account',
    text: `A passkey was just added to your account; it can now sign in and sign actions.\n\n${IF_NOT_YOU}`,
  },
  'eoa-linked': {
    subject: 'A crypto wallet was linked to your account',
    text: `A crypto wallet was just linked to your account; it can now sign in and sign actions.\n\n${IF_NOT_YOU}`,
  },
  'credential-removed': {
    subject: 'A sign-in method was removed from your account',
    text: `A way to sign in (a password, passkey or crypto wallet) was just removed from your account, and the sessions it opened ended.\n\n${IF_NOT_YOU}`,
  },
};

/**
 * Tells the holder of an address that another account named it. Bounded per address and
 * kind, and recorded in `address_notices` (the sender may not keep what it sends).
 */
export class AddressNotices {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly sender: MessageSender,
    private readonly log: BaseLogger,
  ) {}

  /**
   * Sends a notice unless the address had its hourly share (answers false then). With
   * `background`, the message leaves after the caller answered, so an answer takes as long
   * whether or not an address was taken (a mail server's delay would tell).
   */
  async send(to: Contact, kind: NoticeKind, opts: { background?: boolean } = {}) {
    const recipient = recipientOf(to);
    const now = this.clock.now();
    const hourAgo = new Date(now.getTime() - 3_600_000);
    const sent = await countNoticesSince(this.db, recipient, kind, hourAgo);
    if (sent >= MAX_NOTICES_PER_HOUR) return false;
    await insertNotice(this.db, { id: newId('message'), recipient, kind, now });
    const sending = this.sender.send({
      channel: to.channel,
      to: recipient,
      kind,
      ...MESSAGES[kind],
    });
    if (!opts.background) {
      await sending;
      return true;
    }
    // The error may quote the address; the log names only the kind.
    const tracked = sending.catch(() => this.log.warn({ kind }, 'address notice not sent'));
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return true;
  }

  /**
   * After a sign-up committed: the holder of each address the new wallet names hears of it.
   * The sign-up answers the same either way (no enumeration), and the new wallet gets nothing
   * of the address, which its holder's confirmation keeps it from ever proving. Never throws:
   * the account exists by now and its tokens must reach the caller.
   */
  async signedUp(walletId: string, named: Contact[]): Promise<void> {
    try {
      for (const address of named) {
        const holder = await findHolder(this.db, address);
        if (holder && holder.id !== walletId) {
          await this.send(address, 'sign-up-attempt', { background: true });
        }
      }
    } catch {
      this.log.warn({ kind: 'sign-up-attempt' }, 'address notice not sent');
    }
  }

  /**
   * After a credential change committed: each address the wallet holds (confirmed) hears of
   * it, in the background, so a thief who added their own credential with a stolen session
   * is seen (docs/auth.md, "Changing credentials"). Never throws: the change is done.
   */
  async credentialChanged(walletId: string, kind: CredentialChange): Promise<void> {
    try {
      const wallet = await findWallet(this.db, { id: walletId });
      const held: Contact[] = [];
      if (wallet?.email && wallet.email_confirmed_at) {
        held.push({ channel: 'email', email: wallet.email });
      }
      if (wallet?.phone_number && wallet.phone_confirmed_at) {
        held.push({ channel: 'sms', phoneNumber: wallet.phone_number });
      }
      for (const address of held) await this.send(address, kind, { background: true });
    } catch {
      this.log.warn({ kind }, 'address notice not sent');
    }
  }

  /** Waits for notices still being sent (shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
