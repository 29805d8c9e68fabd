import { sql, type SQL } from 'drizzle-orm';
import { Type, type Static, type TProperties } from 'typebox';
import { invalid } from './errors.js';
import { isCleanText } from './input-check.js';
import { isTimestamp } from './timestamp.js';

/**
 * The list conventions (docs/api.md, "Lists"), implemented once. Every list endpoint
 * spreads `listQueryProperties` into its querystring schema, calls `parseList`, builds its
 * WHERE from `keysetCondition` + `createdFilters`, fetches `limit + 1` rows ordered by
 * `orderBy`, and answers with `pageOf`. Keyset pagination: a cursor names the last row's
 * sort value and id, so rows inserted meanwhile never shift or repeat a page.
 */

const DateTime = Type.String({ format: 'date-time' });

export const dateFilterProperties = (field: string) =>
  ({
    [`${field}[$gt]`]: Type.Optional(DateTime),
    [`${field}[$gte]`]: Type.Optional(DateTime),
    [`${field}[$lt]`]: Type.Optional(DateTime),
    [`${field}[$lte]`]: Type.Optional(DateTime),
  }) as Record<string, ReturnType<typeof Type.Optional<typeof DateTime>>>;

export const listQueryProperties = {
  limit: Type.Optional(Type.Integer({ description: 'page size, 1 to 100 (default 20)' })),
  next: Type.Optional(
    Type.String({ maxLength: 512, description: 'cursor from the previous page' }),
  ),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  sortBy: Type.Optional(Type.String({ maxLength: 64 })),
  id: Type.Optional(Type.String({ maxLength: 64 })),
  'org-id': Type.Optional(Type.String({ maxLength: 64 })),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  autocomplete: Type.Optional(Type.String({ maxLength: 256 })),
  ...dateFilterProperties('when_created'),
} satisfies TProperties;

/** Query fields every list accepts; features add their own filters beside them. */
export interface ListQuery {
  limit?: number;
  next?: string;
  order?: 'asc' | 'desc';
  sortBy?: string;
  id?: string;
  'org-id'?: string;
  name?: string;
  autocomplete?: string;
  [filter: string]: unknown;
}

/** A sortable field: its SQL expression and how its values travel in a cursor. */
export interface SortField {
  column: SQL;
  type: 'timestamp' | 'text' | 'number';
}

export interface ListSpec {
  /** Allow-listed sortBy values (spec: "the allowed sortBy fields" are per resource). */
  sortable: Record<string, SortField>;
  defaultSort: string;
  /** The id column, the tie-breaker of every order. */
  idColumn: SQL;
  defaultLimit?: number;
  maxLimit?: number;
  /** API keys clamp larger limits instead of refusing them (docs/api.md, "Lists"). */
  clampLimit?: boolean;
}

/** The ListSpec of a list sorted only by creation time (then id): the common case. */
export function byCreation(extra: Partial<ListSpec> = {}): ListSpec {
  return {
    sortable: { when_created: { column: sql`created_at`, type: 'timestamp' } },
    defaultSort: 'when_created',
    idColumn: sql`id`,
    ...extra,
  };
}

export interface ParsedList {
  limit: number;
  order: 'asc' | 'desc';
  sortBy: string;
  sort: SortField;
  idColumn: SQL;
  after: { value: string | number; id: string } | null;
}

interface CursorBody {
  s: string;
  o: 'asc' | 'desc';
  v: string | number;
  i: string;
}

export function encodeCursor(body: CursorBody): string {
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** Longest text a cursor may carry (ids, names); it is a value the service wrote itself. */
const MAX_CURSOR_TEXT = 1024;

/**
 * A cursor's sort value checked as PostgreSQL will read it, so a forged cursor is 400, not
 * a query the database refuses.
 */
function isCursorValue(type: SortField['type'], v: string | number): boolean {
  switch (type) {
    case 'timestamp':
      return typeof v === 'string' && isTimestamp(v);
    case 'text':
      return typeof v === 'string' && v.length <= MAX_CURSOR_TEXT && isCleanText(v);
    case 'number':
      return typeof v === 'number' && Number.isSafeInteger(v);
  }
}

function decodeCursor(raw: string, sortBy: string, order: 'asc' | 'desc'): CursorBody {
  const bad = () => invalid('malformed cursor', [{ field: 'next', reason: 'is not a cursor' }]);
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  const c = parsed as Partial<CursorBody> | null;
  if (
    !c ||
    typeof c !== 'object' ||
    typeof c.s !== 'string' ||
    (c.o !== 'asc' && c.o !== 'desc') ||
    (typeof c.v !== 'string' && typeof c.v !== 'number')
  ) {
    throw bad();
  }
  if (typeof c.i !== 'string' || c.i.length > MAX_CURSOR_TEXT || !isCleanText(c.i)) throw bad();
  if (c.s !== sortBy || c.o !== order) {
    throw invalid('cursor belongs to another sort order', [
      { field: 'next', reason: 'does not match sortBy and order' },
    ]);
  }
  return c as CursorBody;
}

export function parseList(q: ListQuery, spec: ListSpec): ParsedList {
  const maxLimit = spec.maxLimit ?? 100;
  let limit = q.limit ?? spec.defaultLimit ?? 20;
  if (limit < 1)
    throw invalid('limit must be at least 1', [{ field: 'limit', reason: 'must be >= 1' }]);
  if (limit > maxLimit) {
    if (!spec.clampLimit) {
      throw invalid(`limit must be at most ${maxLimit}`, [
        { field: 'limit', reason: `must be <= ${maxLimit}` },
      ]);
    }
    limit = maxLimit;
  }
  const order = q.order ?? 'desc';
  const sortBy = q.sortBy ?? spec.defaultSort;
  // An own-property lookup: `__proto__` or `constructor` must not find Object's members.
  const sort = Object.hasOwn(spec.sortable, sortBy) ? spec.sortable[sortBy] : undefined;
  if (!sort) {
    throw invalid(`cannot sort by ${sortBy}`, [
      { field: 'sortBy', reason: `one of ${Object.keys(spec.sortable).join(', ')}` },
    ]);
  }
  let after: ParsedList['after'] = null;
  if (q.next) {
    const c = decodeCursor(q.next, sortBy, order);
    if (!isCursorValue(sort.type, c.v)) {
      throw invalid('malformed cursor', [{ field: 'next', reason: 'is not a cursor' }]);
    }
    after = { value: c.v, id: c.i };
  }
  return { limit, order, sortBy, sort, idColumn: spec.idColumn, after };
}

/** `(sort, id) < (cursor)` for desc, `>` for asc; undefined on the first page. */
export function keysetCondition(p: ParsedList): SQL | undefined {
  if (!p.after) return undefined;
  const value =
    p.sort.type === 'timestamp' ? sql`${p.after.value}::timestamptz` : sql`${p.after.value}`;
  return p.order === 'desc'
    ? sql`(${p.sort.column}, ${p.idColumn}) < (${value}, ${p.after.id})`
    : sql`(${p.sort.column}, ${p.idColumn}) > (${value}, ${p.after.id})`;
}

export function orderBy(p: ParsedList): SQL {
  return p.order === 'desc'
    ? sql`ORDER BY ${p.sort.column} DESC, ${p.idColumn} DESC`
    : sql`ORDER BY ${p.sort.column} ASC, ${p.idColumn} ASC`;
}

const OPS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** The four `<field>[$op]` date filters as SQL conditions on `column`. */
export function dateFilters(
  q: Record<string, unknown>,
  column: SQL,
  field = 'when_created',
): SQL[] {
  const out: SQL[] = [];
  for (const [op, sym] of Object.entries(OPS)) {
    const v = q[`${field}[${op}]`];
    if (typeof v === 'string') out.push(sql`${column} ${sql.raw(sym)} ${v}::timestamptz`);
  }
  return out;
}

/** `ILIKE 'term%'` with the LIKE wildcards of the term escaped. */
export function prefixMatch(column: SQL, term: string): SQL {
  const escaped = term.replace(/[\\%_]/g, (c) => `\\${c}`);
  return sql`${column} ILIKE ${escaped + '%'}`;
}

/** AND of the conditions given (undefined ones skipped), as a WHERE clause body. */
export function and(conds: (SQL | undefined)[]): SQL {
  const present = conds.filter((c): c is SQL => c !== undefined);
  if (present.length === 0) return sql`TRUE`;
  return sql.join(present, sql` AND `);
}

export interface Page<T> {
  items: T[];
  next: string;
  has_more: boolean;
}

/**
 * Cuts the `limit + 1` rows fetched into a page. `sortValue` reads a row's sort field
 * as the cursor carries it (ISO string for timestamps).
 */
export function pageOf<T>(
  rows: T[],
  p: ParsedList,
  sortValue: (row: T) => string | number | Date,
  idOf: (row: T) => string,
): Page<T> {
  const hasMore = rows.length > p.limit;
  const items = hasMore ? rows.slice(0, p.limit) : rows;
  const last = items[items.length - 1];
  let next = '';
  if (hasMore && last !== undefined) {
    const raw = sortValue(last);
    // Timestamps travel as ISO 8601 whatever form the row had (PostgreSQL's text through
    // drizzle), so a cursor passes the same date check as a forged one must.
    const v =
      raw instanceof Date || p.sort.type === 'timestamp' ? new Date(raw).toISOString() : raw;
    next = encodeCursor({ s: p.sortBy, o: p.order, v, i: idOf(last) });
  }
  return { items, next, has_more: hasMore };
}

/**
 * `pageOf` for rows whose sorts are `when_created` (created_at) and `when_modified`
 * (updated_at), with the row id as the tie-breaker: objects and templates.
 */
export function pageOfDated<T extends { id: string; created_at: Date; updated_at: Date }>(
  rows: T[],
  p: ParsedList,
): Page<T> {
  return pageOf(
    rows,
    p,
    (r) => (p.sortBy === 'when_modified' ? r.updated_at : r.created_at),
    (r) => r.id,
  );
}

/** The response envelope: `{<name>: [...], next, has_more}` (docs/api.md, "Lists"). */
export const ListEnvelope = <K extends string, T extends ReturnType<typeof Type.Object>>(
  name: K,
  item: T,
) =>
  Type.Object({
    [name]: Type.Array(item),
    next: Type.String(),
    has_more: Type.Boolean(),
  } as { [P in K]: ReturnType<typeof Type.Array<T>> } & {
    next: ReturnType<typeof Type.String>;
    has_more: ReturnType<typeof Type.Boolean>;
  });

export type ListQueryStatic = Static<ReturnType<typeof Type.Object<typeof listQueryProperties>>>;
