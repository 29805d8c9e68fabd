import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asDate, type DbTime } from '../../../db/values.js';
import {
  and,
  byCreation,
  dateFilters,
  keysetCondition,
  orderBy,
  type ParsedList,
} from '../../../lib/list.js';
import type { Rule } from '../schema.js';

/** Paging of the list: newest first by creation, then id. */
export const WEBHOOK_LIST = byCreation();

/** A webhook as the API shows it (never its keys). */
export interface WebhookRow {
  id: string;
  url: string;
  description: string;
  rules: Rule[];
  is_active: boolean;
  created_at: Date;
  updated_at: Date;
}

type RawWebhook = Omit<WebhookRow, 'created_at' | 'updated_at'> & {
  created_at: DbTime;
  updated_at: DbTime;
};

const COLUMNS = sql`id, url, description, rules, is_active, created_at, updated_at`;

/**
 * Runs a statement that carries a signing key. A failure is rethrown without the driver's
 * error, whose text lists the parameters (drizzle) or the failing row (PostgreSQL): the key
 * must never reach a log.
 */
async function keyed<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const e = err as { code?: string; cause?: { code?: string } };
    // The cause is dropped on purpose: its text carries the key.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`webhook key write failed (SQLSTATE ${e.cause?.code ?? e.code ?? 'unknown'})`);
  }
}

function toRow(r: RawWebhook): WebhookRow {
  return { ...r, created_at: asDate(r.created_at), updated_at: asDate(r.updated_at) };
}

/**
 * Holds the organization's row until the transaction ends, so the count-then-insert of
 * concurrent creates runs one at a time. False when the organization does not exist.
 */
export async function lockOrganization(exec: Executor, orgId: string): Promise<boolean> {
  const { rows } = await exec.execute(
    sql`SELECT id FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL FOR UPDATE`,
  );
  return rows.length > 0;
}

export async function countWebhooks(exec: Executor, orgId: string): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM webhooks WHERE organization_id = ${orgId} AND deleted_at IS NULL`);
  return rows[0]?.n ?? 0;
}

export interface NewWebhook {
  id: string;
  orgId: string;
  url: string;
  description: string;
  rules: Rule[];
  signingKey: Buffer;
  now: Date;
}

export async function insertWebhook(exec: Executor, w: NewWebhook): Promise<WebhookRow> {
  const { rows } = await keyed(() =>
    exec.execute<RawWebhook>(sql`
    INSERT INTO webhooks (id, organization_id, url, description, rules, is_active, signing_key,
      active_since, created_at, updated_at)
    VALUES (${w.id}, ${w.orgId}, ${w.url}, ${w.description}, ${JSON.stringify(w.rules)}::jsonb,
      true, ${w.signingKey}, ${w.now}, ${w.now}, ${w.now})
    RETURNING ${COLUMNS}`),
  );
  return toRow(rows[0]!);
}

export async function listWebhooks(
  exec: Executor,
  orgId: string,
  page: ParsedList,
  query: Record<string, unknown>,
): Promise<WebhookRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    sql`deleted_at IS NULL`,
    ...dateFilters(query, sql`created_at`),
    keysetCondition(page),
  ]);
  const { rows } = await exec.execute<RawWebhook>(
    sql`SELECT ${COLUMNS} FROM webhooks WHERE ${where} ${orderBy(page)} LIMIT ${page.limit + 1}`,
  );
  return rows.map(toRow);
}

/** The organization's undeleted webhook; `lock` holds it until the transaction ends. */
export async function findWebhook(
  exec: Executor,
  orgId: string,
  id: string,
  lock = false,
): Promise<WebhookRow | null> {
  const { rows } = await exec.execute<RawWebhook>(sql`
    SELECT ${COLUMNS} FROM webhooks
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    ${lock ? sql`FOR UPDATE` : sql``}`);
  return rows[0] ? toRow(rows[0]) : null;
}

export interface WebhookChanges {
  url?: string;
  description?: string;
  rules?: Rule[];
  isActive?: boolean;
}

/** Applies the changes given; `active_since` moves when the webhook is switched back on. */
export async function updateWebhook(
  exec: Executor,
  orgId: string,
  id: string,
  c: WebhookChanges,
  now: Date,
): Promise<WebhookRow | null> {
  const sets: SQL[] = [sql`updated_at = ${now}`];
  if (c.url !== undefined) sets.push(sql`url = ${c.url}`);
  if (c.description !== undefined) sets.push(sql`description = ${c.description}`);
  if (c.rules !== undefined) sets.push(sql`rules = ${JSON.stringify(c.rules)}::jsonb`);
  if (c.isActive !== undefined) {
    sets.push(sql`is_active = ${c.isActive}`);
    if (c.isActive) {
      sets.push(
        sql`active_since = CASE WHEN is_active THEN active_since ELSE ${now}::timestamptz END`,
      );
    }
  }
  const { rows } = await exec.execute<RawWebhook>(sql`
    UPDATE webhooks SET ${sql.join(sets, sql`, `)}
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    RETURNING ${COLUMNS}`);
  return rows[0] ? toRow(rows[0]) : null;
}

export async function deleteWebhook(
  exec: Executor,
  orgId: string,
  id: string,
  now: Date,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`
    UPDATE webhooks SET deleted_at = ${now}, updated_at = ${now}, is_active = false
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    RETURNING id`);
  return rows.length > 0;
}

/** A new signing key; the current one keeps signing beside it until `previousUntil`. */
export async function rotateKey(
  exec: Executor,
  orgId: string,
  id: string,
  key: Buffer,
  previousUntil: Date,
  now: Date,
): Promise<WebhookRow | null> {
  const { rows } = await keyed(() =>
    exec.execute<RawWebhook>(sql`
    UPDATE webhooks SET previous_signing_key = signing_key, previous_key_until = ${previousUntil},
      signing_key = ${key}, updated_at = ${now}
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    RETURNING ${COLUMNS}`),
  );
  return rows[0] ? toRow(rows[0]) : null;
}
