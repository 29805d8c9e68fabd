import type { Db, Executor } from '../../db/pool.js';
import { readsOn, type ReportReads } from '../../db/reports.js';
import { invalid, notFound } from '../../lib/errors.js';
import type { Page } from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { actionLogPage, objectHistoryPage } from '../ebus/index.js';
import { objectPage, type ObjectRecord } from '../objects/index.js';
import * as repo from './repo.js';
import type { ActionLogRecord, HistoryQuery, SearchQuery, StructuredQuery } from './schema.js';

/** At most this many `custom.<field>` equalities in one structured query. */
export const MAX_CUSTOM_FILTERS = 8;
const FIELD_RE = /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,3}$/;

/** `{a: {b: value}}` from the path `a.b`. */
function nest(path: string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  return { [head!]: rest.length === 0 ? value : nest(rest, value) };
}

/**
 * One `custom.<field>=<value>` equality, as the documents `custom` may contain. A value that
 * reads as a JSON number, boolean or null also matches that typed value, so
 * `custom.level=3` finds 3 as well as "3".
 */
function customEquality(field: string, raw: string): Record<string, unknown>[] {
  const path = field.split('.');
  const alternatives = [nest(path, raw)];
  if (/^(-?\d+(\.\d+)?|true|false|null)$/.test(raw)) {
    alternatives.push(nest(path, JSON.parse(raw)));
  }
  return alternatives;
}

/** The custom-field filters of a structured query, bounded and checked. */
function customFilters(q: Record<string, unknown>): Record<string, unknown>[][] {
  const out: Record<string, unknown>[][] = [];
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
  constructor(
    private readonly db: Db,
    /** Where the anonymous reads run: the public reads' pool (src/db/pool.ts). */
    private readonly publicDb: Executor = db,
    /**
     * Where the searches run: the reports' pool, at most REPORTS_PER_ORGANIZATION of one
     * organization's at once (src/db/reports.ts). A common word or a custom-field filter can
     * match most of an organization's objects, all of which are sorted for one page.
     */
    private readonly reports: ReportReads = readsOn(db),
  ) {}

  /** Full-text search over object name, description, category and template names. */
  async search(auth: AuthContext, q: SearchQuery): Promise<Page<ObjectRecord>> {
    requirePermission(auth, 'objects.read');
    const orgId = requireOrg(auth);
    return this.reports.run(orgId, (exec) => objectPage(exec, orgId, q, { text: q.q }));
  }

  /** Structured filters: template, owner and custom field equalities. */
  async query(auth: AuthContext, q: StructuredQuery): Promise<Page<ObjectRecord>> {
    requirePermission(auth, 'objects.read');
    const orgId = requireOrg(auth);
    const filters = {
      templateId: q.template_id,
      owner: q.owner,
      customContains: customFilters(q),
    };
    return this.reports.run(orgId, (exec) => objectPage(exec, orgId, q, filters));
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
    return actionLogPage(this.db, orgId, q, { object_id: objectId });
  }

  /**
   * A public object's applied actions, whoever executed them (no credential): what an
   * outside verifier replays to check the object's integrity chain. 404 for an object that
   * is missing or not public, the same answer for both.
   */
  async publicHistory(objectId: string, q: HistoryQuery): Promise<Page<ActionLogRecord>> {
    if (!(await repo.publicObjectExists(this.publicDb, objectId))) throw notFound('object');
    return objectHistoryPage(this.publicDb, objectId, q);
  }
}
