import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { RowRunner } from '../../db/prepared.js';
import { asDate } from '../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
} from '../../lib/list.js';
import type { ObjectRow } from './record.js';

/**
 * The columns of an object record. Named rather than `*` so the generated search
 * columns (name_lower, search) never travel.
 */
export const OBJECT_COLUMNS = sql.raw(`id, organization_id, template_id, owner, metadata, custom,
  custom_hash, latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped,
  is_public, nonce, version, state_hash, content_hash, integrity_hash, prev_integrity_hash,
  collection_id, created_at, updated_at`);

/** Dates as Dates, however the driver delivered them. */
export function objectRow(row: ObjectRow): ObjectRow {
  row.created_at = asDate(row.created_at);
  row.updated_at = asDate(row.updated_at);
  return row;
}

/** The sort columns of object lists (the allow-list of sortBy). */
const OBJECT_SORTS = {
  when_created: { column: sql`created_at`, type: 'timestamp' as const },
  when_modified: { column: sql`updated_at`, type: 'timestamp' as const },
};

export const OBJECT_LIST: ListSpec = {
  sortable: OBJECT_SORTS,
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

export const PUBLIC_OBJECT_LIST: ListSpec = { ...OBJECT_LIST, maxLimit: 100 };

export async function findObject(
  exec: Executor,
  orgId: string,
  id: string,
): Promise<ObjectRow | null> {
  const { rows } = await exec.execute<ObjectRow>(
    sql`SELECT ${OBJECT_COLUMNS} FROM objects WHERE organization_id = ${orgId} AND id = ${id}`,
  );
  return rows[0] ? objectRow(rows[0]) : null;
}

/** Filters of an organization's object lists: GET /objects and the indexer's. */
export interface ObjectFilters {
  id?: string;
  /** As stored (addresses lowercase). */
  owner?: string;
  templateId?: string;
  dropped?: boolean;
  redeemed?: boolean;
  /** Words (web-search syntax) to find in the object's text or its template's name. */
  text?: string;
  /** Each entry: documents of which `custom` must contain at least one. */
  customContains?: Record<string, unknown>[][];
  /** The query holding the `when_created[$op]` filters. */
  dates: Record<string, unknown>;
  /** The query holding the `when_modified[$op]` filters, when the list has them. */
  modifiedDates?: Record<string, unknown>;
}

/** Full-text match of `terms` (web-search syntax) on object text and template names. */
function textMatch(orgId: string, terms: string): SQL {
  const q = sql`websearch_to_tsquery('simple', ${terms})`;
  return sql`(search @@ ${q} OR template_id IN (SELECT id FROM templates
    WHERE organization_id = ${orgId} AND to_tsvector('simple'::regconfig, name) @@ ${q}))`;
}

/** `custom @> {…}` for each document, ORed; served by the GIN index objects_custom. */
function customContainsAny(docs: Record<string, unknown>[]): SQL {
  const alternatives = docs.map((doc) => sql`custom @> ${JSON.stringify(doc)}::jsonb`);
  return alternatives.length === 1 ? alternatives[0]! : sql`(${sql.join(alternatives, sql` OR `)})`;
}

/** A page (`limit + 1` rows) of one organization's objects. */
export async function listObjects(
  exec: Executor,
  orgId: string,
  f: ObjectFilters,
  p: ParsedList,
): Promise<ObjectRow[]> {
  const where = and([
    keysetCondition(p),
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.owner !== undefined ? sql`owner = ${f.owner}` : undefined,
    f.templateId !== undefined ? sql`template_id = ${f.templateId}` : undefined,
    f.dropped !== undefined ? sql`is_dropped = ${f.dropped}` : undefined,
    f.redeemed !== undefined ? sql`is_redeemed = ${f.redeemed}` : undefined,
    f.text !== undefined ? textMatch(orgId, f.text) : undefined,
    ...(f.customContains ?? []).map(customContainsAny),
    ...dateFilters(f.dates, sql`created_at`, 'when_created'),
    ...(f.modifiedDates ? dateFilters(f.modifiedDates, sql`updated_at`, 'when_modified') : []),
  ]);
  const { rows } = await exec.execute<ObjectRow>(sql`SELECT ${OBJECT_COLUMNS} FROM objects
    WHERE organization_id = ${orgId} AND ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows.map(objectRow);
}

/** Filters of the public list (docs/objects.md, "The public list"). */
export interface PublicObjectFilters {
  id?: string;
  includeDropped: boolean;
  /** As stored (addresses lowercase). */
  owner?: string;
  /** A geohash prefix. */
  geoHash?: string;
  collectionId?: string;
  /** A prefix of metadata.name, in any case. */
  autocomplete?: string;
  /** The query holding the `when_created[$op]` and `when_modified[$op]` filters. */
  dates: Record<string, unknown>;
}

function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function publicDates(f: PublicObjectFilters): SQL[] {
  return [
    ...dateFilters(f.dates, sql`created_at`, 'when_created'),
    ...dateFilters(f.dates, sql`updated_at`, 'when_modified'),
  ];
}

function publicConditions(f: PublicObjectFilters, dates: SQL[]): (SQL | undefined)[] {
  return [
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.includeDropped ? undefined : sql`NOT is_dropped`,
    f.owner !== undefined ? sql`owner = ${f.owner}` : undefined,
    // The geohash alphabet has no LIKE wildcards (the schema's pattern guarantees it).
    f.geoHash !== undefined ? sql`geo_hash LIKE ${f.geoHash + '%'}` : undefined,
    f.collectionId !== undefined ? sql`collection_id = ${f.collectionId}` : undefined,
    f.autocomplete !== undefined
      ? sql`name_lower LIKE ${escapeLike(f.autocomplete.toLowerCase()) + '%'}`
      : undefined,
    ...dates,
  ];
}

/**
 * A page of public objects. `is_public` is written as a bare column (not a parameter) so
 * the planner can match the partial indexes `WHERE is_public` of 0007_objects.sql. With a
 * geohash or name prefix, or a date bound, which index to read depends on the value (a
 * generic plan cannot seek a LIKE prefix, and reads every row of a broad date range to sort
 * them): such a query is planned for its values on every run (`planForValues`).
 */
export async function listPublicObjects(
  run: RowRunner,
  f: PublicObjectFilters,
  p: ParsedList,
): Promise<ObjectRow[]> {
  const dates = publicDates(f);
  const where = and([keysetCondition(p), ...publicConditions(f, dates)]);
  const planForValues = f.geoHash !== undefined || f.autocomplete !== undefined || dates.length > 0;
  const rows = await run<ObjectRow>(
    sql`SELECT ${OBJECT_COLUMNS} FROM objects
    WHERE is_public AND ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`,
    { planForValues },
  );
  return rows.map(objectRow);
}

/** The object columns as the group statement's JSON rows carry them. */
const GROUP_OBJECT_COLUMNS = sql.raw(`id text, organization_id text, template_id text, owner text,
  metadata jsonb, custom jsonb, custom_hash text, latitude float8, longitude float8, geo_hash text,
  ownership_claimed boolean, is_redeemed boolean, is_dropped boolean, is_public boolean,
  nonce integer, version integer, state_hash text, content_hash text, integrity_hash text,
  prev_integrity_hash text, collection_id text, created_at timestamptz, updated_at timestamptz`);

/**
 * The event bus's group statement (ebus/repo/group-write.ts) inserts the minted objects with
 * this data-modifying statement, given their JSON rows: objects own the `objects` table.
 */
export function insertObjects(rows: SQL): SQL {
  return sql`INSERT INTO objects (id, organization_id, template_id, owner, metadata, custom, custom_hash,
        latitude, longitude, geo_hash, ownership_claimed, is_redeemed, is_dropped, is_public, nonce,
        version, state_hash, content_hash, integrity_hash, prev_integrity_hash, collection_id,
        created_at, updated_at)
      SELECT * FROM jsonb_to_recordset(${rows}) AS r(${GROUP_OBJECT_COLUMNS})
      RETURNING 1`;
}

/**
 * The group statement's update of the changed objects, each guarded by the version it had
 * when read (`expected_version`) and by its public flag as read (a template's visibility
 * switch changes the flag, not the version: a remembered flag must still hold), given their
 * JSON rows.
 */
export function updateObjects(rows: SQL): SQL {
  return sql`UPDATE objects o SET owner = r.owner, metadata = r.metadata, custom = r.custom,
        custom_hash = r.custom_hash, latitude = r.latitude, longitude = r.longitude,
        geo_hash = r.geo_hash, is_redeemed = r.is_redeemed, is_dropped = r.is_dropped,
        nonce = r.nonce, version = r.version, state_hash = r.state_hash,
        content_hash = r.content_hash, integrity_hash = r.integrity_hash,
        prev_integrity_hash = r.prev_integrity_hash, updated_at = r.updated_at
      FROM jsonb_to_recordset(${rows})
        AS r(${GROUP_OBJECT_COLUMNS}, expected_version integer)
      WHERE o.id = r.id AND o.version = r.expected_version AND o.is_public = r.is_public
      RETURNING 1`;
}

/**
 * objects.is_public is a copy of the template's flag (so the public list needs no join);
 * it follows the template in the same transaction. Not an object change: no hash or
 * version moves. With `nowait`, an object another transaction holds fails the statement at
 * once (SQLSTATE 55P03, `isLockNotAvailable`) instead of waiting for it.
 */
export async function setObjectsPublic(
  exec: Executor,
  orgId: string,
  templateId: string,
  isPublic: boolean,
  opts: { nowait?: boolean } = {},
): Promise<void> {
  const which = sql`organization_id = ${orgId} AND template_id = ${templateId}
    AND is_public <> ${isPublic}`;
  await exec.execute(
    opts.nowait
      ? sql`UPDATE objects SET is_public = ${isPublic} WHERE id IN (
          SELECT id FROM objects WHERE ${which} FOR NO KEY UPDATE NOWAIT)`
      : sql`UPDATE objects SET is_public = ${isPublic} WHERE ${which}`,
  );
}
