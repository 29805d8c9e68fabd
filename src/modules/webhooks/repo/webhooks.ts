import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import type { SecretChange, StoredSecret } from '../../../db/sealed-columns.js';
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
    const code = e.cause?.code ?? e.code ?? 'unknown';
    // The cause is dropped on purpose: its text carries the key. The SQLSTATE is kept as the
    // error's code, as the driver's error has it, for the callers that read it.
    throw Object.assign(new Error(`webhook key write failed (SQLSTATE ${code})`), { code });
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

/** The webhook's signing key as stored, held until the transaction ends; null: no webhook. */
export async function lockedKey(exec: Executor, orgId: string, id: string): Promise<Buffer | null> {
  const { rows } = await exec.execute<{ signing_key: Buffer }>(sql`
    SELECT signing_key FROM webhooks
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL FOR UPDATE`);
  return rows[0]?.signing_key ?? null;
}

/**
 * A new signing key; `previous` (the current one, stored for its new column) keeps signing
 * beside it until `previousUntil`.
 */
export async function rotateKey(
  exec: Executor,
  orgId: string,
  id: string,
  keys: { key: Buffer; previous: Buffer },
  previousUntil: Date,
  now: Date,
): Promise<WebhookRow | null> {
  const { rows } = await keyed(() =>
    exec.execute<RawWebhook>(sql`
    UPDATE webhooks SET previous_signing_key = ${keys.previous},
      previous_key_until = ${previousUntil}, signing_key = ${keys.key}, updated_at = ${now}
    WHERE id = ${id} AND organization_id = ${orgId} AND deleted_at IS NULL
    RETURNING ${COLUMNS}`),
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The columns that keep a webhook's keys (src/lib/sealed-secret.ts). */
export type KeyColumn = 'signing_key' | 'previous_signing_key';

/** The keys of a column (deleted webhooks' too) that do or do not start with `prefix`. */
export async function storedKeys(
  exec: Executor,
  column: KeyColumn,
  prefix: string,
  starting: boolean,
): Promise<StoredSecret<Buffer>[]> {
  const c = sql.raw(column);
  const mark = Buffer.from(prefix, 'latin1');
  const { rows } = await exec.execute<StoredSecret<Buffer>>(sql`
    SELECT id AS row, ${c} AS value FROM webhooks
    WHERE ${c} IS NOT NULL AND (substring(${c} FROM 1 FOR ${mark.length}) = ${mark}) = ${starting}`);
  return rows;
}

/** Stores each key over the one it was made from (sealing changes no webhook's `updated_at`). */
export async function storeKeys(
  exec: Executor,
  column: KeyColumn,
  changes: readonly SecretChange<Buffer>[],
): Promise<number> {
  const c = sql.raw(column);
  const hex = (b: Buffer) => b.toString('hex');
  const { rows } = await keyed(() =>
    exec.execute(sql`
    UPDATE webhooks w SET ${c} = decode(v.value, 'hex')
    FROM unnest(${sql.param(changes.map((x) => x.row))}::text[],
      ${sql.param(changes.map((x) => hex(x.old)))}::text[],
      ${sql.param(changes.map((x) => hex(x.value)))}::text[]) AS v(id, old, value)
    WHERE w.id = v.id AND w.${c} = decode(v.old, 'hex')
    RETURNING w.id`),
  );
  return rows.length;
}
