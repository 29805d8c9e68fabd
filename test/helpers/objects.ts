import { expect } from 'vitest';
import { sql } from 'drizzle-orm';
import { hashJson } from '../../src/lib/hash.js';
import { newId } from '../../src/lib/ids.js';
import { geohashOf } from '../../src/modules/objects/geo.js';
import {
  computeObjectHashes,
  GENESIS_HASH,
  type ObjectMetadata,
} from '../../src/modules/objects/hashes.js';
import type { Face } from '../../src/modules/templates/index.js';
import { normalizeMetadata } from '../../src/modules/objects/record.js';
import type { TestService } from './service.js';

export interface TemplateFixture {
  name?: string;
  description?: string;
  category?: string;
  faces?: Face[];
  actions?: string[];
  customSchema?: Record<string, unknown> | null;
  isPublic?: boolean;
}

/** A template straight into the database (as POST /templates would store it). */
export async function insertTemplate(
  svc: TestService,
  orgId: string,
  t: TemplateFixture = {},
): Promise<string> {
  const id = newId('template');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO templates
    (id, organization_id, name, description, category, faces, actions, custom_schema,
     is_public, created_at, updated_at)
    VALUES (${id}, ${orgId}, ${t.name ?? 'Test template'}, ${t.description ?? ''},
      ${t.category ?? ''}, ${JSON.stringify(t.faces ?? [])}::jsonb,
      ${sql.param(t.actions ?? ['mint', 'transfer'])}::text[],
      ${t.customSchema ? JSON.stringify(t.customSchema) : null}::jsonb,
      ${t.isPublic ?? false}, ${now}, ${now})`);
  return id;
}

export interface ObjectFixture {
  templateId: string;
  owner?: string;
  metadata?: Partial<ObjectMetadata>;
  custom?: Record<string, unknown>;
  location?: { latitude: number; longitude: number } | null;
  isDropped?: boolean;
  isRedeemed?: boolean;
  collectionId?: string | null;
  createdAt?: Date;
  updatedAt?: Date;
  /** The hash of the (fictional) mint action; a random one by default. */
  actionHash?: string;
}

/**
 * An object exactly as the event bus stores a minted one: organization and is_public
 * from its template, hashes from computeObjectHashes over the template's faces.
 */
export async function insertObject(svc: TestService, o: ObjectFixture): Promise<string> {
  const db = svc.container.db;
  const { rows } = await db.execute<{ organization_id: string; faces: Face[]; is_public: boolean }>(
    sql`SELECT organization_id, faces, is_public FROM templates WHERE id = ${o.templateId}`,
  );
  const tpl = rows[0];
  if (!tpl) throw new Error(`no template ${o.templateId}`);
  const id = newId('object');
  const owner = o.owner ?? '0x' + '1'.repeat(40);
  const metadata = normalizeMetadata(o.metadata);
  const custom = o.custom ?? {};
  const location = o.location
    ? { ...o.location, geo_hash: geohashOf(o.location.latitude, o.location.longitude) }
    : null;
  const hashes = computeObjectHashes(
    {
      owner,
      location,
      custom,
      metadata,
      faces: tpl.faces,
      is_redeemed: o.isRedeemed ?? false,
      is_dropped: o.isDropped ?? false,
    },
    GENESIS_HASH,
    o.actionHash ?? hashJson({ mint: id }),
  );
  const created = o.createdAt ?? svc.clock.now();
  const updated = o.updatedAt ?? created;
  await db.execute(sql`INSERT INTO objects
    (id, organization_id, template_id, owner, metadata, custom, custom_hash, latitude, longitude,
     geo_hash, is_redeemed, is_dropped, is_public, nonce, version, state_hash, content_hash,
     integrity_hash, prev_integrity_hash, collection_id, created_at, updated_at)
    VALUES (${id}, ${tpl.organization_id}, ${o.templateId}, ${owner}, ${JSON.stringify(metadata)}::jsonb,
      ${JSON.stringify(custom)}::jsonb, ${hashes.custom_hash}, ${location?.latitude ?? null},
      ${location?.longitude ?? null}, ${location?.geo_hash ?? null}, ${o.isRedeemed ?? false},
      ${o.isDropped ?? false}, ${tpl.is_public}, 0, 1, ${hashes.state_hash}, ${hashes.content_hash},
      ${hashes.integrity_hash}, ${hashes.prev_integrity_hash}, ${o.collectionId ?? null},
      ${created}, ${updated})`);
  return id;
}

/** An action log row for an object (as the event bus writes one). */
export async function insertActionLog(
  svc: TestService,
  a: {
    orgId: string;
    walletId: string;
    objectId: string;
    templateId: string;
    name: string;
    nonce: number;
    createdAt?: Date;
  },
): Promise<string> {
  const id = newId('action');
  const params = { object_id: a.objectId };
  await svc.container.db.execute(sql`INSERT INTO action_logs
    (id, organization_id, hash, name, wallet_id, wallet, signature_type, signature, nonce, params,
     object_id, template_id, fee_wei, batch_id, created_at)
    VALUES (${id}, ${a.orgId}, ${hashJson({ id })}, ${a.name}, ${a.walletId}, ${'0x' + '2'.repeat(40)},
      'eoa', '"0x00"'::jsonb, ${a.nonce}, ${JSON.stringify(params)}::jsonb,
      ${a.objectId}, ${a.templateId}, 1000, NULL, ${a.createdAt ?? svc.clock.now()})`);
  return id;
}

/** `PUT /templates/{id}` with `changes`, by a member who may update templates; expects 200. */
export async function putTemplate(
  svc: TestService,
  headers: Record<string, string>,
  id: string,
  changes: Record<string, unknown>,
): Promise<void> {
  const res = await svc.app.inject({
    method: 'PUT',
    url: `/templates/${id}`,
    headers,
    payload: changes,
  });
  expect(res.statusCode, res.body).toBe(200);
}
