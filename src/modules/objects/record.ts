import { Type } from 'typebox';
import type { ImageRecord, Location, ObjectMetadata } from './hashes.js';

/** A row of `objects` as repos select it (`SELECT * FROM objects`). */
export type ObjectRow = {
  id: string;
  organization_id: string;
  template_id: string;
  owner: string;
  metadata: Partial<ObjectMetadata> & Record<string, unknown>;
  custom: Record<string, unknown>;
  custom_hash: string;
  latitude: number | null;
  longitude: number | null;
  geo_hash: string | null;
  ownership_claimed: boolean;
  is_redeemed: boolean;
  is_dropped: boolean;
  is_public: boolean;
  nonce: number;
  version: number;
  state_hash: string;
  content_hash: string;
  integrity_hash: string;
  prev_integrity_hash: string;
  created_at: Date;
  updated_at: Date;
  /** Set from the mint's params (0007_objects.sql); absent only in rows read before it. */
  collection_id?: string | null;
};

/** An object as the action rules and the event bus hold it: `collection_id` always read. */
export type ObjectState = ObjectRow & { collection_id: string | null };

/** The object record (docs/objects.md, "The object record"), every field present. */
export interface ObjectRecord {
  id: string;
  chain: { ownership_claimed: boolean };
  custom: Record<string, unknown>;
  custom_hash: string;
  metadata: ObjectMetadata;
  owner: string;
  template_id: string;
  location: Location | null;
  nonce: number;
  version: number;
  state_hash: string;
  content_hash: string;
  integrity_hash: string;
  prev_integrity_hash: string;
  is_redeemed: boolean;
  is_dropped: boolean;
  collection_id: string | null;
  when_created: string;
  when_modified: string;
}

/** Metadata as stored, completed with defaults so every field of the record is present. */
export function normalizeMetadata(m: Partial<ObjectMetadata> | undefined): ObjectMetadata {
  return {
    name: m?.name ?? '',
    description: m?.description ?? '',
    category: m?.category ?? '',
    image: (m?.image as ImageRecord | undefined) ?? null,
    edition: m?.edition ?? 1,
  };
}

export function locationOf(
  row: Pick<ObjectRow, 'latitude' | 'longitude' | 'geo_hash'>,
): Location | null {
  if (row.latitude === null || row.longitude === null) return null;
  return { latitude: row.latitude, longitude: row.longitude, geo_hash: row.geo_hash ?? '' };
}

export function toObjectRecord(row: ObjectRow): ObjectRecord {
  return {
    id: row.id,
    chain: { ownership_claimed: row.ownership_claimed },
    custom: row.custom,
    custom_hash: row.custom_hash,
    metadata: normalizeMetadata(row.metadata),
    owner: row.owner,
    template_id: row.template_id,
    location: locationOf(row),
    nonce: row.nonce,
    version: row.version,
    state_hash: row.state_hash,
    content_hash: row.content_hash,
    integrity_hash: row.integrity_hash,
    prev_integrity_hash: row.prev_integrity_hash,
    is_redeemed: row.is_redeemed,
    is_dropped: row.is_dropped,
    collection_id: row.collection_id ?? null,
    when_created: row.created_at.toISOString(),
    when_modified: row.updated_at.toISOString(),
  };
}

const DateTime = Type.String({ format: 'date-time' });

export const ImageSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  url: Type.String(),
  hash: Type.String(),
  is_public: Type.Boolean(),
  when_created: DateTime,
});

export const LocationSchema = Type.Object({
  latitude: Type.Number(),
  longitude: Type.Number(),
  geo_hash: Type.String(),
});

/**
 * Response schema of an object (docs/objects.md, "The object record"), shared by every route that
 * returns one.
 */
export const ObjectRecordSchema = Type.Object({
  id: Type.String(),
  chain: Type.Object({ ownership_claimed: Type.Boolean() }),
  custom: Type.Object({}, { additionalProperties: true }),
  custom_hash: Type.String(),
  metadata: Type.Object({
    name: Type.String(),
    description: Type.String(),
    category: Type.String(),
    image: Type.Union([ImageSchema, Type.Null()]),
    edition: Type.Integer(),
  }),
  owner: Type.String(),
  template_id: Type.String(),
  location: Type.Union([LocationSchema, Type.Null()]),
  nonce: Type.Integer(),
  version: Type.Integer(),
  state_hash: Type.String(),
  content_hash: Type.String(),
  integrity_hash: Type.String(),
  prev_integrity_hash: Type.String(),
  is_redeemed: Type.Boolean(),
  is_dropped: Type.Boolean(),
  collection_id: Type.Union([Type.String(), Type.Null()]),
  when_created: DateTime,
  when_modified: DateTime,
});
