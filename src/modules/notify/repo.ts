import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';

export async function insertOutboxMessage(
  exec: Executor,
  m: Omit<OutboxRow, 'created_at'> & { created_at: Date },
): Promise<void> {
  await exec.execute(sql`INSERT INTO outbox_messages
      (id, channel, recipient, kind, subject, body, created_at)
      VALUES (${m.id}, ${m.channel}, ${m.recipient}, ${m.kind}, ${m.subject}, ${m.body},
              ${m.created_at})`);
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
