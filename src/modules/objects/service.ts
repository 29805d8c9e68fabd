import type { Db, Executor } from '../../db/pool.js';
import { rowsVia, type RowRunner } from '../../db/prepared.js';
import { notFound } from '../../lib/errors.js';
import { pageOfDated, parseList, type ListQuery, type Page } from '../../lib/list.js';
import { requireOrg, requirePermission, type AuthContext } from '../../lib/permissions.js';
import { listPublic, normalizeOwner } from './public-list.js';
import { toObjectRecord, type ObjectRecord } from './record.js';
import { findObject, listObjects, OBJECT_LIST, type ObjectFilters } from './repo.js';
import type { ListObjectsQuery, PublicObjectList, PublicObjectsQuery } from './schema.js';

/** Filters of `objectPage`; `owner` as the caller wrote it. */
export type ObjectPageFilters = Omit<ObjectFilters, 'dates' | 'modifiedDates'> & {
  /** Apply the `when_modified[$op]` filters of the query too. */
  modifiedDates?: boolean;
};

/**
 * One page of an organization's objects (list conventions; sorts when_created and
 * when_modified), the `when_created[$op]` filters read from `q`. The caller has checked
 * that the caller may read them.
 */
export async function objectPage(
  exec: Executor,
  orgId: string,
  q: ListQuery,
  f: ObjectPageFilters,
): Promise<Page<ObjectRecord>> {
  const p = parseList(q, OBJECT_LIST);
  const rows = await listObjects(
    exec,
    orgId,
    {
      ...f,
      owner: f.owner !== undefined ? normalizeOwner(f.owner) : undefined,
      dates: q,
      modifiedDates: f.modifiedDates ? q : undefined,
    },
    p,
  );
  const page = pageOfDated(rows, p);
  return { ...page, items: page.items.map(toObjectRecord) };
}

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
    return objectPage(this.db, orgId, q, {
      id: q.id,
      owner: q.owner,
      templateId: q.template_id,
      dropped: q.dropped,
      redeemed: q.redeemed,
      modifiedDates: true,
    });
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
