import { Type, type Static } from 'typebox';
import { dateFilterProperties, ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { GEOHASH_PATTERN } from './geo.js';
import { ObjectRecordSchema } from './record.js';
import { IdParam } from '../../lib/ids.js';

const Owner = Type.String({ minLength: 1, maxLength: 128, description: 'owner address' });

/** GET /objects: the caller's organization's objects. */
export const ListObjectsQuery = Type.Object({
  ...listQueryProperties,
  ...dateFilterProperties('when_modified'),
  owner: Type.Optional(Owner),
  template_id: Type.Optional(Type.String({ maxLength: 64 })),
  dropped: Type.Optional(Type.Boolean()),
  redeemed: Type.Optional(Type.Boolean()),
});
export type ListObjectsQuery = Static<typeof ListObjectsQuery>;

export const ObjectList = ListEnvelope('objects', ObjectRecordSchema);

export const ObjectIdParams = Type.Object({ id: IdParam('object') });
export type ObjectIdParams = Static<typeof ObjectIdParams>;

/** GET /public/objects: every filter of docs/objects.md, "The public list". */
export const PublicObjectsQuery = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 64 })),
  limit: listQueryProperties.limit,
  autocomplete: Type.Optional(
    Type.String({ minLength: 1, maxLength: 128, description: 'prefix of metadata.name' }),
  ),
  next: listQueryProperties.next,
  order: listQueryProperties.order,
  sortBy: Type.Optional(
    Type.String({ maxLength: 64, description: 'when_created (default) or when_modified' }),
  ),
  include_faces: Type.Optional(Type.Boolean({ default: false })),
  include_actions: Type.Optional(Type.Boolean({ default: false })),
  include_dropped: Type.Optional(Type.Boolean({ default: false })),
  owner: Type.Optional(Owner),
  geo_hash: Type.Optional(
    Type.String({ pattern: GEOHASH_PATTERN, description: 'geohash prefix (1–12 characters)' }),
  ),
  collection_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  ...dateFilterProperties('when_created'),
  ...dateFilterProperties('when_modified'),
});
export type PublicObjectsQuery = Static<typeof PublicObjectsQuery>;

const FaceOut = Type.Object({
  id: Type.String(),
  url: Type.String(),
  config: Type.Record(Type.String(), Type.Unknown()),
  content: Type.String(),
});

export const PublicObjectList = Type.Object({
  objects: Type.Array(ObjectRecordSchema),
  faces: Type.Array(Type.Object({ template_id: Type.String(), face: FaceOut })),
  actions: Type.Array(
    Type.Object({ template_id: Type.String(), actions: Type.Array(Type.String()) }),
  ),
  next: Type.String(),
  has_more: Type.Boolean(),
});
export type PublicObjectList = Static<typeof PublicObjectList>;
