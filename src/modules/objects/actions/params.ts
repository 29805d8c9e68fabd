import { Type, type Static } from 'typebox';
import { LinkUrl } from '../../../lib/link-url.js';

/** The six actions (docs/ebus.md, "Actions and their params"). */
export const ACTION_NAMES = ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/** 0x and 40 hex digits, in any case. */
export const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x + 40 hex' });
const Id = Type.String({ minLength: 1, maxLength: 64 });

const LocationInput = Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false },
);

const ImageInput = Type.Object(
  {
    id: Type.String({ maxLength: 64 }),
    name: Type.String({ maxLength: 256 }),
    type: Type.String({ maxLength: 128 }),
    url: LinkUrl,
    hash: Type.String({ maxLength: 128 }),
    is_public: Type.Boolean(),
    when_created: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { additionalProperties: false },
);

const MetadataInput = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 256 })),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
    category: Type.Optional(Type.String({ maxLength: 128 })),
    image: Type.Optional(Type.Union([ImageInput, Type.Null()])),
    edition: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  },
  { additionalProperties: false },
);
export type MetadataInput = Static<typeof MetadataInput>;

const Custom = Type.Object({}, { additionalProperties: true, maxProperties: 256 });

/**
 * Params of each action (docs/ebus.md, "Actions and their params"). The event bus's service checks
 * them (`paramsCheckers`, ebus/schema.ts) before anything else, per item, so a batch refuses one
 * item.
 */
export const ActionParams = {
  mint: Type.Object(
    {
      template_id: Id,
      metadata: Type.Optional(MetadataInput),
      custom: Type.Optional(Custom),
      owner: Type.Optional(Address),
      location: Type.Optional(LocationInput),
      collection_id: Type.Optional(Id),
    },
    { additionalProperties: false },
  ),
  transfer: Type.Object({ object_id: Id, to: Address }, { additionalProperties: false }),
  update: Type.Object(
    { object_id: Id, custom: Type.Optional(Custom), metadata: Type.Optional(MetadataInput) },
    { additionalProperties: false },
  ),
  redeem: Type.Object({ object_id: Id }, { additionalProperties: false }),
  drop: Type.Object({ object_id: Id, location: LocationInput }, { additionalProperties: false }),
  pickup: Type.Object({ object_id: Id }, { additionalProperties: false }),
} as const;

export type MintParams = Static<typeof ActionParams.mint>;
export type TransferParams = Static<typeof ActionParams.transfer>;
export type UpdateParams = Static<typeof ActionParams.update>;
export type DropParams = Static<typeof ActionParams.drop>;
export type ObjectParams = { object_id: string };
export type LocationInput = Static<typeof LocationInput>;
