import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { RowRunner } from '../../db/prepared.js';
import { asDate } from '../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  prefixMatch,
  type ListSpec,
  type ParsedList,
} from '../../lib/list.js';
import type { Face, TemplateRow } from './types.js';

export type { TemplateRow } from './types.js';

function templateRow(row: TemplateRow): TemplateRow {
  row.created_at = asDate(row.created_at);
  row.updated_at = asDate(row.updated_at);
  return row;
}

export type NewTemplate = Omit<TemplateRow, 'updated_at' | 'version'>;

/** Inserts a template (migration 0020's trigger makes it version 1 and keeps that version). */
export async function insertTemplate(exec: Executor, t: NewTemplate): Promise<void> {
  await exec.execute(sql`INSERT INTO templates
    (id, organization_id, name, description, category, faces, actions, custom_schema,
     is_public, created_at, updated_at)
    VALUES (${t.id}, ${t.organization_id}, ${t.name}, ${t.description}, ${t.category},
      ${JSON.stringify(t.faces)}::jsonb, ${sql.param(t.actions)}::text[],
      ${t.custom_schema === null ? null : JSON.stringify(t.custom_schema)}::jsonb,
      ${t.is_public}, ${t.created_at}, ${t.created_at})`);
}

/**
 * Serialises template creates per organization for the rest of the transaction, so the count
 * below cannot go stale before the insert (an advisory lock: the organization row stays free
 * for the event bus's groups, which lock it).
 */
export async function lockTemplateCreates(exec: Executor, orgId: string): Promise<void> {
  await exec.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`templates:${orgId}`}))`);
}

/** How many templates an organization holds. */
export async function countTemplates(exec: Executor, orgId: string): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${orgId}`,
  );
  return rows[0]!.n;
}

/** A kept template version's content, from `template_versions`. */
export type TemplateVersionRow = {
  template_id: string;
  version: number;
  name: string;
  description: string;
  category: string;
  faces: Face[];
  created_at: Date;
};

/** One version of a public template (null when the template is not public or no such one). */
export async function findPublicTemplateVersion(
  exec: Executor,
  templateId: string,
  version: number,
): Promise<TemplateVersionRow | null> {
  const { rows } = await exec.execute<TemplateVersionRow>(sql`
    SELECT v.template_id, v.version, v.name, v.description, v.category, v.faces, v.created_at
    FROM template_versions v JOIN templates t ON t.id = v.template_id
    WHERE v.template_id = ${templateId} AND v.version = ${version} AND t.is_public`);
  const row = rows[0];
  return row ? { ...row, created_at: asDate(row.created_at) } : null;
}

/**
 * An organization's template's versions, newest first, older than `before` (when given);
 * one more than `limit` is read to tell whether there are more.
 */
export async function listTemplateVersions(
  exec: Executor,
  orgId: string,
  templateId: string,
  q: { limit: number; before?: number | undefined },
): Promise<TemplateVersionRow[]> {
  const older = q.before === undefined ? sql`` : sql`AND v.version < ${q.before}`;
  const { rows } = await exec.execute<TemplateVersionRow>(sql`
    SELECT v.template_id, v.version, v.name, v.description, v.category, v.faces, v.created_at
    FROM template_versions v JOIN templates t ON t.id = v.template_id
    WHERE v.template_id = ${templateId} AND t.organization_id = ${orgId} ${older}
    ORDER BY v.version DESC LIMIT ${q.limit + 1}`);
  return rows.map((r) => ({ ...r, created_at: asDate(r.created_at) }));
}

/** One template of an organization, optionally locked for an update. */
export async function findTemplate(
  exec: Executor,
  orgId: string,
  id: string,
  forUpdate = false,
): Promise<TemplateRow | null> {
  const lock = forUpdate ? sql`FOR UPDATE` : sql``;
  const { rows } = await exec.execute<TemplateRow>(
    sql`SELECT * FROM templates WHERE organization_id = ${orgId} AND id = ${id} ${lock}`,
  );
  return rows[0] ? templateRow(rows[0]) : null;
}

/** A template by id alone: public reads and the event bus (which checks the org itself). */
export async function findTemplateById(exec: Executor, id: string): Promise<TemplateRow | null> {
  const { rows } = await exec.execute<TemplateRow>(sql`SELECT * FROM templates WHERE id = ${id}`);
  return rows[0] ? templateRow(rows[0]) : null;
}

export const TEMPLATE_LIST: ListSpec = {
  sortable: {
    when_created: { column: sql`created_at`, type: 'timestamp' },
    when_modified: { column: sql`updated_at`, type: 'timestamp' },
  },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

export interface TemplateFilters {
  id?: string;
  name?: string;
  /** A prefix of the name, in any case. */
  autocomplete?: string;
  category?: string;
  isPublic?: boolean;
  /** The query holding the `when_created[$op]` filters. */
  dates: Record<string, unknown>;
}

/** A page (`limit + 1` rows) of one organization's templates. */
export async function listTemplates(
  exec: Executor,
  orgId: string,
  f: TemplateFilters,
  p: ParsedList,
): Promise<TemplateRow[]> {
  const where = and([
    keysetCondition(p),
    ...dateFilters(f.dates, sql`created_at`),
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.name !== undefined ? sql`name = ${f.name}` : undefined,
    f.autocomplete ? prefixMatch(sql`name`, f.autocomplete) : undefined,
    f.category !== undefined ? sql`category = ${f.category}` : undefined,
    f.isPublic !== undefined ? sql`is_public = ${f.isPublic}` : undefined,
  ]);
  const { rows } = await exec.execute<TemplateRow>(sql`SELECT * FROM templates
    WHERE organization_id = ${orgId} AND ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows.map(templateRow);
}

export async function saveTemplate(exec: Executor, t: TemplateRow): Promise<void> {
  await exec.execute(sql`UPDATE templates SET
    name = ${t.name}, description = ${t.description}, category = ${t.category},
    faces = ${JSON.stringify(t.faces)}::jsonb, actions = ${sql.param(t.actions)}::text[],
    custom_schema = ${t.custom_schema === null ? null : JSON.stringify(t.custom_schema)}::jsonb,
    is_public = ${t.is_public}, updated_at = ${t.updated_at}
    WHERE organization_id = ${t.organization_id} AND id = ${t.id}`);
}

/** True when a statement could not take a row lock at once (NOWAIT, SQLSTATE 55P03). */
export function isLockNotAvailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const c = e as { code?: unknown; cause?: unknown };
    if (c.code === '55P03') return true;
    e = c.cause;
  }
  return false;
}

export type FacesActionsRow = { id: string; faces: Face[]; actions: string[] };

/** Faces and actions of the given public templates, in one query. */
export async function publicFacesAndActions(
  run: RowRunner,
  templateIds: string[],
): Promise<FacesActionsRow[]> {
  if (templateIds.length === 0) return [];
  return run<FacesActionsRow>(sql`SELECT id, faces, actions
    FROM templates WHERE id = ANY(${sql.param(templateIds)}::text[]) AND is_public ORDER BY id`);
}
