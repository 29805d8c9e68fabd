import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ObjectRecordSchema } from '../objects/record.js';
import { dateFilterProperties, listQueryProperties, ListEnvelope } from '../../lib/list.js';
import { IdParam } from '../../lib/ids.js';

/** The six actions of design.md §5. */
export const ACTION_NAMES = ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: '0x + 40 hex' });
const Id = Type.String({ minLength: 1, maxLength: 64 });
const WeiString = Type.String({ pattern: '^[0-9]{1,78}$', description: 'amount in wei' });

export const ActionNameSchema = Type.Union(ACTION_NAMES.map((n) => Type.Literal(n)));

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
    url: Type.String({ maxLength: 2048 }),
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

/** Params of each action (design.md §5), checked in the service so a batch refuses one item. */
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

export const paramsCheckers = {
  mint: Compile(ActionParams.mint),
  transfer: Compile(ActionParams.transfer),
  update: Compile(ActionParams.update),
  redeem: Compile(ActionParams.redeem),
  drop: Compile(ActionParams.drop),
  pickup: Compile(ActionParams.pickup),
};

/** The signed part of an action: exactly the fields of the text (design.md §5). */
export const SignedAction = Type.Object(
  {
    wallet: Address,
    name: ActionNameSchema,
    params: Type.Object({}, { additionalProperties: true, maxProperties: 16 }),
    nonce: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    expires: Type.String({ format: 'date-time', maxLength: 64 }),
  },
  { additionalProperties: false },
);
export type SignedAction = Static<typeof SignedAction>;

const B64url = (max: number) => Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength: max });

/** AuthenticationResponseJSON as the browser's `credential.toJSON()` gives it. */
const AssertionCredential = Type.Object(
  {
    id: B64url(1024),
    rawId: B64url(1024),
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64url(8192),
        authenticatorData: B64url(8192),
        signature: B64url(2048),
        userHandle: Type.Optional(B64url(1024)),
      },
      { additionalProperties: false },
    ),
    clientExtensionResults: Type.Object({}, { additionalProperties: true, maxProperties: 16 }),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
  },
  { additionalProperties: false },
);

export const SignatureBody = Type.Union([
  Type.Object(
    { type: Type.Literal('eoa'), signature: Type.String({ maxLength: 200 }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { type: Type.Literal('webauthn'), credential: AssertionCredential },
    { additionalProperties: false },
  ),
]);
export type SignatureBody = Static<typeof SignatureBody>;

export const ExecuteBody = Type.Object(
  { action: SignedAction, signature: SignatureBody, max_fee_wei: Type.Optional(WeiString) },
  { additionalProperties: false },
);
export type ExecuteBody = Static<typeof ExecuteBody>;

export const BatchBody = Type.Object(
  { actions: Type.Array(ExecuteBody, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);
export type BatchBody = Static<typeof BatchBody>;

export const PrepareBody = Type.Object(
  {
    action: Type.Object(
      {
        name: ActionNameSchema,
        params: Type.Object({}, { additionalProperties: true, maxProperties: 16 }),
      },
      { additionalProperties: false },
    ),
    wallet: Type.Optional(Address),
  },
  { additionalProperties: false },
);
export type PrepareBody = Static<typeof PrepareBody>;

export const NonceQuery = Type.Object({ address: Type.Optional(Address) });
export const NonceResponse = Type.Object({ address: Type.String(), nonce: Type.Integer() });

export const FeeQuoteSchema = Type.Object({
  token: Type.String(),
  decimals: Type.Integer(),
  fixed_fee_wei: Type.String(),
  proving_fee_wei: Type.String(),
  total_fee_wei: Type.String(),
  total_fee: Type.String({ description: 'total fee in whole tokens' }),
  when_updated: Type.String({ format: 'date-time' }),
});

export const NetworkResponse = Type.Object({
  network: Type.String(),
  token: Type.String(),
  decimals: Type.Integer(),
});

export const PrepareResponse = Type.Object({
  text: Type.String({ description: 'the exact text to sign' }),
  action: Type.Object({
    wallet: Type.String(),
    name: Type.String(),
    params: Type.Object({}, { additionalProperties: true }),
    nonce: Type.Integer(),
    expires: Type.String(),
  }),
  hash: Type.String({ description: '0x + hex SHA-256 of the text' }),
  challenge: Type.String({ description: 'WebAuthn challenge: base64url(SHA-256(text))' }),
  fee: FeeQuoteSchema,
});

/** The action log record (design.md §3). */
export const ActionLogSchema = Type.Object({
  id: Type.String(),
  hash: Type.String(),
  name: Type.String(),
  wallet: Type.String(),
  signature_type: Type.Union([Type.Literal('eoa'), Type.Literal('webauthn')]),
  nonce: Type.Integer(),
  params: Type.Object({}, { additionalProperties: true }),
  object_id: Type.Union([Type.String(), Type.Null()]),
  template_id: Type.Union([Type.String(), Type.Null()]),
  fee_wei: Type.String(),
  batch_id: Type.Union([Type.String(), Type.Null()]),
  when_created: Type.String({ format: 'date-time' }),
});

export const ExecuteResponse = Type.Object({
  action: ActionLogSchema,
  object: ObjectRecordSchema,
});

const ErrorItem = Type.Object({ code: Type.Integer(), message: Type.String() });

export const BatchResponse = Type.Object({
  results: Type.Array(
    Type.Object({
      status: Type.Union([Type.Literal('applied'), Type.Literal('refused')]),
      action: Type.Optional(ActionLogSchema),
      object: Type.Optional(ObjectRecordSchema),
      error: Type.Optional(ErrorItem),
    }),
  ),
});

export const ActionLogQuery = Type.Object({
  ...listQueryProperties,
  ...dateFilterProperties('when_created'),
  wallet: Type.Optional(Address),
  object_id: Type.Optional(Type.String({ maxLength: 64 })),
  hash: Type.Optional(Type.String({ maxLength: 80 })),
});
export type ActionLogQuery = Static<typeof ActionLogQuery>;

export const ActionLogList = ListEnvelope('action_logs', ActionLogSchema);

export const ObjectIdParams = Type.Object({ id: IdParam('object') });
