import { sql } from 'drizzle-orm';
import type { Db } from '../../db/pool.js';
import { rowsVia, type RowRunner } from '../../db/prepared.js';
import { notFound } from '../../lib/errors.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  pageOfDated,
  parseList,
  type ListSpec,
  type Page,
} from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { listPublic, normalizeOwner } from './public-list.js';
import { toObjectRecord, type ObjectRecord } from './record.js';
import { findObject, listObjects, OBJECT_SORTS } from './repo.js';
import type { ListObjectsQuery, PublicObjectList, PublicObjectsQuery } from './schema.js';

const LIST: ListSpec = { sortable: OBJECT_SORTS, defaultSort: 'when_created', idColumn: sql`id` };

/**
 * Reads of smart objects. Nothing here changes an object: objects change only through
 * signed actions applied by the event bus.
 */
export class ObjectService {
  private readonly publicRows: RowRunner;

  /** `publicRows`: how the public list reads (prepared statements in the service). */
  constructor(
    private readonly db: Db,
    publicRows?: RowRunner,
  ) {
    this.publicRows = publicRows ?? rowsVia(db);
  }

  /** The caller's organization's objects (filters owner, template, dropped, redeemed, dates). */
  async list(auth: AuthContext, q: ListObjectsQuery): Promise<Page<ObjectRecord>> {
    requirePermission(auth, 'objects.read');
    const orgId = requireOrg(auth);
    const p = parseList(q, LIST);
    const where = and([
      keysetCondition(p),
      q.id !== undefined ? sql`id = ${q.id}` : undefined,
      q.owner !== undefined ? sql`owner = ${normalizeOwner(q.owner)}` : undefined,
      q.template_id !== undefined ? sql`template_id = ${q.template_id}` : undefined,
      q.dropped !== undefined ? sql`is_dropped = ${q.dropped}` : undefined,
      q.redeemed !== undefined ? sql`is_redeemed = ${q.redeemed}` : undefined,
      ...dateFilters(q, sql`created_at`, 'when_created'),
      ...dateFilters(q, sql`updated_at`, 'when_modified'),
    ]);
    const rows = await listObjects(this.db, orgId, where, orderBy(p), p.limit + 1);
    const page = pageOfDated(rows, p);
    return { ...page, items: page.items.map(toObjectRecord) };
  }

  /** One object of the caller's organization; another organization's is 404. */
  async get(auth: AuthContext, id: string): Promise<ObjectRecord> {
    requirePermission(auth, 'objects.read');
    const row = await findObject(this.db, requireOrg(auth), id);
    if (!row) throw notFound('object');
    return toObjectRecord(row);
  }

  /** The public list (no caller): objects of public templates only. */
  async listPublic(q: PublicObjectsQuery): Promise<PublicObjectList> {
    return listPublic(this.publicRows, q);
  }
}
