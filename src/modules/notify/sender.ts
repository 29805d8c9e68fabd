import type { BaseLogger } from 'pino';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { insertOutboxMessage } from './repo.js';

// The operator command and the tests read what the default sender stored.
export { readOutbox, type OutboxRow } from './repo.js';

export interface OutgoingMessage {
  channel: 'email' | 'sms';
  /** An email address or an E.164 phone number. */
  to: string;
  /** What it is, e.g. `verification`, `otp`, `password-reset`, `invitation`. */
  kind: string;
  subject: string;
  text: string;
}

/** Where codes and invitations leave the service (docs/auth.md, "Codes"). */
export interface MessageSender {
  send(message: OutgoingMessage): Promise<void>;
}

/**
 * The default sender: keeps every message in `outbox_messages` (tests and the operator
 * command `npm run ons -- outbox --to …` read it) and logs that it was sent, never its text,
 * because the text holds a code.
 */
export class OutboxSender implements MessageSender {
  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    private readonly log: BaseLogger,
  ) {}

  async send(m: OutgoingMessage): Promise<void> {
    await insertOutboxMessage(this.db, {
      id: newId('message'),
      channel: m.channel,
      recipient: m.to,
      kind: m.kind,
      subject: m.subject,
      body: m.text,
      created_at: this.clock.now(),
    });
    this.log.info({ channel: m.channel, kind: m.kind }, 'message stored in outbox');
  }
}

/**
 * SMTP when `SMTP_URL` is set; SMS still goes to the outbox (no SMS gateway configured).
 * An email is handed to the mail server in the background: `send` answers at once, and a
 * failure is logged (never the text). Waiting would tell from a request's time, or from its
 * 500 when the server fails, whether a code went out, that is whether an account has the
 * address, which the code routes answer alike (docs/auth.md, "Codes").
 */
export class SmtpSender implements MessageSender {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
    private readonly fallback: MessageSender,
    private readonly log: BaseLogger,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  send(m: OutgoingMessage): Promise<void> {
    if (m.channel !== 'email') return this.fallback.send(m);
    this.transport.sendMail({ from: this.from, to: m.to, subject: m.subject, text: m.text }).then(
      () => this.log.info({ channel: m.channel, kind: m.kind }, 'email handed to the mail server'),
      // The error's code only: its message may name the recipient.
      (err: unknown) =>
        this.log.warn(
          { kind: m.kind, code: (err as { code?: string }).code ?? 'unknown' },
          'an email could not be handed to the mail server',
        ),
    );
    return Promise.resolve();
  }
}

export function createSender(
  db: Db,
  clock: Clock,
  log: BaseLogger,
  smtp: { url: string | null; from: string },
): MessageSender {
  const outbox = new OutboxSender(db, clock, log);
  return smtp.url ? new SmtpSender(smtp.url, smtp.from, outbox, log) : outbox;
}
