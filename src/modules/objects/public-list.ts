import type { RowRunner } from '../../db/prepared.js';
import { pageOf, parseList } from '../../lib/list.js';
import { publicFacesAndActions } from '../templates/index.js';
import { toObjectRecord } from './record.js';
import { listPublicObjects, PUBLIC_OBJECT_LIST } from './repo.js';
import type { PublicObjectList, PublicObjectsQuery } from './schema.js';

/** Addresses are stored lowercase; an EOA written in checksum case still matches. */
export function normalizeOwner(owner: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(owner) ? owner.toLowerCase() : owner;
}

/**
 * GET /public/objects: objects of public templates, newest first by default. One query
 * for the page, plus one for the faces and actions of its templates when asked for.
 */
export async function listPublic(run: RowRunner, q: PublicObjectsQuery): Promise<PublicObjectList> {
  const p = parseList(q, PUBLIC_OBJECT_LIST);
  const rows = await listPublicObjects(
    run,
    {
      id: q.id,
      includeDropped: q.include_dropped === true,
      owner: q.owner !== undefined ? normalizeOwner(q.owner) : undefined,
      geoHash: q.geo_hash,
      collectionId: q.collection_id,
      autocomplete: q.autocomplete,
      dates: q,
    },
    p,
  );
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
