import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/pool.js';
import { invalid, notFound } from '../../lib/errors.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  pageOf,
  pageOfDated,
  parseList,
  type ListSpec,
  type Page,
} from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { normalizeOwner } from '../objects/public-list.js';
import { toObjectRecord, type ObjectRecord } from '../objects/record.js';
import { listObjects, OBJECT_SORTS } from '../objects/repo.js';
import { toActionLogRecord } from '../ebus/repo/lookups.js';
import * as repo from './repo.js';
import type { ActionLogRecord, HistoryQuery, SearchQuery, StructuredQuery } from './schema.js';

/** At most this many `custom.<field>` equalities in one structured query. */
export const MAX_CUSTOM_FILTERS = 8;
const FIELD_RE = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,3}$/;

const OBJECTS: ListSpec = {
  sortable: OBJECT_SORTS,
  defaultSort: 'when_created',
  idColumn: sql`id`,
};
const HISTORY: ListSpec = {
  sortable: { when_created: OBJECT_SORTS.when_created },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

/** `{a: {b: value}}` from the path `a.b`. */
function nest(path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  return { [head!]: rest.length === 0 ? value : nest(rest, value) };
}

/**
 * One `custom.<field>=<value>` equality. A value that reads as a JSON number, boolean or
 * null also matches that typed value, so `custom.level=3` finds 3 as well as "3".
 */
function customEquality(field: string, raw: string): SQL {
  const path = field.split('.');
  const alternatives = [repo.customContains(nest(path, raw))];
  if (/^(-?\d+(\.\d+)?|true|false|null)$/.test(raw)) {
    alternatives.push(repo.customContains(nest(path, JSON.parse(raw))));
  }
  return alternatives.length === 1 ? alternatives[0]! : sql`(${sql.join(alternatives, sql` OR `)})`;
}

/** The custom-field filters of a structured query, bounded and checked. */
function customFilters(q: Record<string, unknown>): SQL[] {
  const out: SQL[] = [];
  for (const [key, value] of Object.entries(q)) {
    if (!key.startsWith('custom.')) continue;
    const field = key.slice('custom.'.length);
    if (!FIELD_RE.test(field)) {
      throw invalid(`bad custom field name ${key.slice(0, 80)}`, [
        { field: key.slice(0, 80), reason: 'names a custom field: letters, digits, _ or -' },
      ]);
    }
    if (typeof value !== 'string') {
      throw invalid(`${key} must be given once`, [{ field: key, reason: 'must be one string' }]);
    }
    out.push(customEquality(field, value));
  }
  if (out.length > MAX_CUSTOM_FILTERS) {
    throw invalid(`at most ${MAX_CUSTOM_FILTERS} custom filters`, [
      { field: 'custom', reason: `at most ${MAX_CUSTOM_FILTERS} filters` },
    ]);
  }
  return out;
}

/** Search and structured queries over the organization's objects, and object histories. */
export class IndexerService {
  constructor(private readonly db: Db) {}

  private async objectPage(
    orgId: string,
    q: Record<string, unknown>,
    filters: (SQL | undefined)[],
  ) {
    const p = parseList(q, OBJECTS);
    const where = and([keysetCondition(p), ...dateFilters(q, sql`created_at`), ...filters]);
    const rows = await listObjects(this.db, orgId, where, orderBy(p), p.limit + 1);
    const page = pageOfDated(rows, p);
    return { ...page, items: page.items.map(toObjectRecord) };
  }

  /** Full-text search over object name, description, category and template names. */
  async search(auth: AuthContext, q: SearchQuery): Promise<Page<ObjectRecord>> {
    requirePermission(auth, 'objects.read');
    const orgId = requireOrg(auth);
    return this.objectPage(orgId, q, [repo.textMatch(orgId, q.q)]);
  }

  /** Structured filters: template, owner and custom field equalities. */
  async query(auth: AuthContext, q: StructuredQuery): Promise<Page<ObjectRecord>> {
    requirePermission(auth, 'objects.read');
    const orgId = requireOrg(auth);
    return this.objectPage(orgId, q, [
      q.template_id !== undefined ? sql`template_id = ${q.template_id}` : undefined,
      q.owner !== undefined ? sql`owner = ${normalizeOwner(q.owner)}` : undefined,
      ...customFilters(q),
    ]);
  }

  /** An object's applied actions, newest first by default. */
  async history(
    auth: AuthContext,
    objectId: string,
    q: HistoryQuery,
  ): Promise<Page<ActionLogRecord>> {
    requirePermission(auth, 'actions.read');
    const orgId = requireOrg(auth);
    if (!(await repo.objectExists(this.db, orgId, objectId))) throw notFound('object');
    const p = parseList(q, HISTORY);
    const where = and([keysetCondition(p), ...dateFilters(q, sql`created_at`)]);
    const rows = await repo.listObjectHistory(
      this.db,
      orgId,
      objectId,
      where,
      orderBy(p),
      p.limit + 1,
    );
    const page = pageOf(
      rows,
      p,
      (r) => r.created_at,
      (r) => r.id,
    );
    return { ...page, items: page.items.map(toActionLogRecord) };
  }
}
