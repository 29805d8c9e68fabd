import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
  byCreation,
} from '../../lib/list.js';

export type SupportMessageRow = {
  id: string;
  organization_id: string;
  wallet_id: string;
  title: string;
  content: string;
  created_at: DbTime;
};

export const SUPPORT_LIST: ListSpec = byCreation();

const COLUMNS = sql`id, organization_id, wallet_id, title, content, created_at`;

export async function insertMessage(
  exec: Executor,
  m: SupportMessageRow & { sentByWalletId: string; apiKeyId: string | null },
): Promise<void> {
  await exec.execute(sql`INSERT INTO support_messages
    (id, organization_id, wallet_id, sent_by_wallet_id, api_key_id, title, content, created_at)
    VALUES (${m.id}, ${m.organization_id}, ${m.wallet_id}, ${m.sentByWalletId}, ${m.apiKeyId},
      ${m.title}, ${m.content}, ${m.created_at})`);
}

export async function listMessages(
  exec: Executor,
  orgId: string,
  f: { id?: string; walletId?: string; dates: Record<string, unknown> },
  p: ParsedList,
): Promise<SupportMessageRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.walletId !== undefined ? sql`wallet_id = ${f.walletId}` : undefined,
    ...dateFilters(f.dates, sql`created_at`),
    keysetCondition(p),
  ]);
  const { rows } = await exec.execute<SupportMessageRow>(sql`SELECT ${COLUMNS}
    FROM support_messages WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows;
}

export async function findMessage(
  exec: Executor,
  orgId: string,
  id: string,
): Promise<SupportMessageRow | null> {
  const { rows } = await exec.execute<SupportMessageRow>(sql`SELECT ${COLUMNS}
    FROM support_messages WHERE organization_id = ${orgId} AND id = ${id}`);
  return rows[0] ?? null;
}

/** Serialises access requests of one client address (across instances). */
export async function lockClient(exec: Executor, clientIp: string): Promise<void> {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`access-request:${clientIp}`}))`);
}

/** How many requests this address sent since `since`, and when the oldest of them was. */
export async function recentAccessRequests(
  exec: Executor,
  clientIp: string,
  since: Date,
): Promise<{ n: number; oldest: DbTime | null }> {
  const { rows } = await exec.execute<{ n: number; oldest: DbTime | null }>(sql`
    SELECT count(*)::int AS n, min(created_at) AS oldest FROM access_requests
    WHERE client_ip = ${clientIp} AND created_at > ${since}`);
  return rows[0] ?? { n: 0, oldest: null };
}

export async function insertAccessRequest(
  exec: Executor,
  r: { id: string; feature: string; email: string; details: string; clientIp: string; now: Date },
): Promise<void> {
  await exec.execute(sql`INSERT INTO access_requests
    (id, feature, email, details, client_ip, created_at)
    VALUES (${r.id}, ${r.feature}, ${r.email}, ${r.details}, ${r.clientIp}, ${r.now})`);
}
