import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Db, Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

export interface OutgoingMessage {
  channel: 'email' | 'sms';
  /** An email address or an E.164 phone number. */
  to: string;
  /** What it is, e.g. `verification`, `otp`, `password-reset`, `invitation`. */
  kind: string;
  subject: string;
  text: string;
}

/** Where codes and invitations leave the service (design.md §4). */
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
    private readonly log: FastifyBaseLogger,
  ) {}

  async send(m: OutgoingMessage): Promise<void> {
    await this.db.execute(sql`INSERT INTO outbox_messages
      (id, channel, recipient, kind, subject, body, created_at)
      VALUES (${newId('message')}, ${m.channel}, ${m.to}, ${m.kind}, ${m.subject}, ${m.text},
              ${this.clock.now()})`);
    this.log.info({ channel: m.channel, kind: m.kind }, 'message stored in outbox');
  }
}

/** SMTP when `SMTP_URL` is set; SMS still goes to the outbox (no SMS gateway configured). */
export class SmtpSender implements MessageSender {
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
    private readonly fallback: MessageSender,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(m: OutgoingMessage): Promise<void> {
    if (m.channel !== 'email') return this.fallback.send(m);
    await this.transport.sendMail({ from: this.from, to: m.to, subject: m.subject, text: m.text });
  }
}

export function createSender(
  db: Db,
  clock: Clock,
  log: FastifyBaseLogger,
  smtp: { url: string | null; from: string },
): MessageSender {
  const outbox = new OutboxSender(db, clock, log);
  return smtp.url ? new SmtpSender(smtp.url, smtp.from, outbox) : outbox;
}

// A `type`, not an interface: drizzle's execute<Row> needs an index-compatible shape.
export type OutboxRow = {
  id: string;
  channel: string;
  recipient: string;
  kind: string;
  subject: string;
  body: string;
  created_at: DbTime;
};

/** What the default sender stored for one address, newest first. */
export async function readOutbox(db: Executor, to: string, limit = 50): Promise<OutboxRow[]> {
  const { rows } = await db.execute<OutboxRow>(sql`SELECT id, channel, recipient, kind, subject,
      body, created_at FROM outbox_messages WHERE recipient = ${to}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`);
  return rows;
}
