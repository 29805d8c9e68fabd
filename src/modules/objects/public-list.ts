import { sql, type SQL } from 'drizzle-orm';
import type { RowRunner } from '../../db/prepared.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  pageOf,
  parseList,
  type ListSpec,
} from '../../lib/list.js';
import { publicFacesAndActions } from '../templates/repo.js';
import { toObjectRecord } from './record.js';
import { listPublicObjects, OBJECT_SORTS } from './repo.js';
import type { PublicObjectList, PublicObjectsQuery } from './schema.js';

const PUBLIC_LIST: ListSpec = {
  sortable: OBJECT_SORTS,
  defaultSort: 'when_created',
  idColumn: sql`id`,
  maxLimit: 100,
};

/** Addresses are stored lowercase; an EOA written in checksum case still matches. */
export function normalizeOwner(owner: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(owner) ? owner.toLowerCase() : owner;
}

function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function conditions(q: PublicObjectsQuery): (SQL | undefined)[] {
  return [
    q.id !== undefined ? sql`id = ${q.id}` : undefined,
    q.include_dropped ? undefined : sql`NOT is_dropped`,
    q.owner !== undefined ? sql`owner = ${normalizeOwner(q.owner)}` : undefined,
    // The geohash alphabet has no LIKE wildcards (the schema's pattern guarantees it).
    q.geo_hash !== undefined ? sql`geo_hash LIKE ${q.geo_hash + '%'}` : undefined,
    q.collection_id !== undefined ? sql`collection_id = ${q.collection_id}` : undefined,
    q.autocomplete !== undefined
      ? sql`name_lower LIKE ${escapeLike(q.autocomplete.toLowerCase()) + '%'}`
      : undefined,
    ...dateFilters(q, sql`created_at`, 'when_created'),
    ...dateFilters(q, sql`updated_at`, 'when_modified'),
  ];
}

/**
 * GET /public/objects: objects of public templates, newest first by default. One query
 * for the page, plus one for the faces and actions of its templates when asked for.
 */
export async function listPublic(run: RowRunner, q: PublicObjectsQuery): Promise<PublicObjectList> {
  const p = parseList(q, PUBLIC_LIST);
  const where = and([keysetCondition(p), ...conditions(q)]);
  const rows = await listPublicObjects(run, where, orderBy(p), p.limit + 1);
  const page = pageOf(
    rows,
    p,
    (r) => (p.sortBy === 'when_modified' ? r.updated_at : r.created_at),
    (r) => r.id,
  );
  const out: PublicObjectList = {
    objects: page.items.map(toObjectRecord),
    faces: [],
    actions: [],
    next: page.next,
    has_more: page.has_more,
  };
  if ((q.include_faces || q.include_actions) && page.items.length > 0) {
    const ids = [...new Set(page.items.map((o) => o.template_id))];
    for (const t of await publicFacesAndActions(run, ids)) {
      if (q.include_faces) for (const face of t.faces) out.faces.push({ template_id: t.id, face });
      if (q.include_actions) out.actions.push({ template_id: t.id, actions: t.actions });
    }
  }
  return out;
}
