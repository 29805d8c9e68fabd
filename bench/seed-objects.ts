/**
 * Seeds public objects set-based (one INSERT … SELECT over generate_series), for the public
 * list benchmark and the query-plan test. Objects cluster around 50 "cities" so geohash
 * prefixes select realistic neighbourhoods; owners cycle over `owners` addresses.
 */
import { sql } from 'drizzle-orm';
import ngeohash from 'ngeohash';
import type { Db } from '../src/db/pool.js';

export interface SeedResult {
  orgId: string;
  templateIds: string[];
  /** An owner holding count / owners objects. */
  sampleOwner: string;
  /** A 4-character geohash prefix around the first city. */
  sampleGeoPrefix: string;
}

const CITIES = Array.from({ length: 50 }, (_, i) => ({
  lat: -60 + ((i * 37) % 120) + 0.5,
  lon: -170 + ((i * 71) % 340) + 0.5,
}));

function owner(i: number): string {
  return '0x' + i.toString(16).padStart(40, '0');
}

/** Deterministic pseudo-random numbers, so every run seeds the same data. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export async function seedPublicObjects(
  db: Db,
  count: number,
  opts: { owners?: number; droppedEvery?: number } = {},
): Promise<SeedResult> {
  const owners = opts.owners ?? 1000;
  const droppedEvery = opts.droppedEvery ?? 50;
  const orgId = 'org_01BENCH000000000000000000';
  const now = new Date('2026-11-01T00:00:00.000Z');
  await db.execute(sql`INSERT INTO organizations (id, name, settings, balance_wei, created_at, updated_at)
    VALUES (${orgId}, 'Bench', '{}'::jsonb, 0, ${now}, ${now}) ON CONFLICT DO NOTHING`);
  const templateIds = Array.from({ length: 10 }, (_, i) => `tpl_01BENCH00000000000000000${i}`);
  for (const [i, id] of templateIds.entries()) {
    const faces = [{ id: 'front', url: `https://cdn.example/${i}.png`, config: {}, content: '' }];
    await db.execute(sql`INSERT INTO templates (id, organization_id, name, faces, actions, is_public, created_at, updated_at)
      VALUES (${id}, ${orgId}, ${`Template ${i}`}, ${JSON.stringify(faces)}::jsonb,
        ${sql.param(['mint', 'transfer', 'drop', 'pickup'])}::text[], true, ${now}, ${now})
      ON CONFLICT DO NOTHING`);
  }
  const rand = rng(42);
  const lat: number[] = [];
  const lon: number[] = [];
  const geo: string[] = [];
  for (let i = 0; i < count; i++) {
    const c = CITIES[i % CITIES.length]!;
    const la = Math.max(-89.9, Math.min(89.9, c.lat + (rand() - 0.5) * 0.6));
    const lo = Math.max(-179.9, Math.min(179.9, c.lon + (rand() - 0.5) * 0.6));
    lat.push(la);
    lon.push(lo);
    geo.push(ngeohash.encode(la, lo, 9));
  }
  // Object i: created one second after object i-1, modified a little later for some.
  await db.execute(sql`INSERT INTO objects
      (id, organization_id, template_id, owner, metadata, custom, custom_hash, latitude, longitude,
       geo_hash, is_dropped, is_public, nonce, version, state_hash, content_hash, integrity_hash,
       prev_integrity_hash, created_at, updated_at)
    SELECT 'obj_01BENCH' || lpad(g.i::text, 19, '0'), ${orgId},
      (${sql.param(templateIds)}::text[])[1 + g.i % 10],
      '0x' || lpad(to_hex(g.i % ${owners}), 40, '0'),
      jsonb_build_object('name', 'Object ' || g.i, 'description', 'Seeded object number ' || g.i,
        'category', 'bench', 'image', NULL, 'edition', 1),
      jsonb_build_object('level', g.i % 10),
      '0x' || encode(sha256(('c' || g.i)::bytea), 'hex'),
      p.lat, p.lon, p.geo, g.i % ${droppedEvery} = 0, true, 0, 1,
      '0x' || encode(sha256(('s' || g.i)::bytea), 'hex'),
      '0x' || encode(sha256(('t' || g.i)::bytea), 'hex'),
      '0x' || encode(sha256(('i' || g.i)::bytea), 'hex'),
      '0x' || repeat('0', 64),
      ${now}::timestamptz - make_interval(secs => ${count} - g.i),
      ${now}::timestamptz - make_interval(secs => ${count} - g.i) + make_interval(secs => g.i % 7)
    FROM generate_series(1, ${count}) AS g(i)
    JOIN unnest(${sql.param(lat)}::float8[], ${sql.param(lon)}::float8[], ${sql.param(geo)}::text[])
      WITH ORDINALITY AS p(lat, lon, geo, n) ON p.n = g.i
    ON CONFLICT DO NOTHING`);
  await db.execute(sql`ANALYZE objects`);
  await db.execute(sql`ANALYZE templates`);
  return {
    orgId,
    templateIds,
    sampleOwner: owner(7),
    sampleGeoPrefix: geo[0]!.slice(0, 4),
  };
}
