import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { BASE64URL_MAYBE_PADDED } from '../../lib/base64url.js';
import { ACTION_NAMES, ActionParams, Address } from '../objects/index.js';
import { ObjectRecordSchema } from '../objects/index.js';
import { dateFilterProperties, listQueryProperties, ListEnvelope } from '../../lib/list.js';

const WeiString = Type.String({ pattern: '^[0-9]{1,78}$', description: 'amount in wei' });

export const ActionNameSchema = Type.Union(ACTION_NAMES.map((n) => Type.Literal(n)));

export const paramsCheckers = {
  mint: Compile(ActionParams.mint),
  transfer: Compile(ActionParams.transfer),
  update: Compile(ActionParams.update),
  redeem: Compile(ActionParams.redeem),
  drop: Compile(ActionParams.drop),
  pickup: Compile(ActionParams.pickup),
};

/**
 * The signed part of an action: exactly the fields of the text (docs/ebus.md, "The text to sign").
 */
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

// With or without padding: the service unpads before checking (the log keeps what was sent).
const B64url = (max: number) => Type.String({ pattern: BASE64URL_MAYBE_PADDED, maxLength: max });

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

export const NonceQuery = Type.Object({
  address: Type.Optional(Address),
  /** An EOA: the wallet whose own address it is, or to which it is linked. */
  signer: Type.Optional(Address),
});
export const NonceResponse = Type.Object({
  address: Type.String(),
  nonce: Type.Integer(),
  /** The caller's organization ('' for a session that acts in none). */
  organization_id: Type.String(),
});

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
  batch_public_key: Type.String({
    description:
      "the batch key's raw 32-byte Ed25519 public key, 0x + hex: it verifies batch proofs",
  }),
  webauthn: Type.Object(
    {
      rp_id: Type.String({
        description: 'WEBAUTHN_RP_ID: SHA-256 of it is the rpIdHash of every passkey assertion',
      }),
      origins: Type.Array(Type.String(), {
        description: "WEBAUTHN_ORIGINS: a passkey assertion's clientDataJSON origin is one of them",
      }),
    },
    { description: 'What the passkey assertions of actions are checked against (docs/ebus.md)' },
  ),
  log: Type.Optional(
    Type.Object(
      {
        origin: Type.String({ description: "the log's origin line and key name" }),
        verifier_key: Type.String({
          description: "the log's signed-note verifier key: <name>+<key id>+<base64(0x01 ‖ key)>",
        }),
        witnesses: Type.Array(
          Type.Object({
            name: Type.String(),
            verifier_key: Type.String({ description: 'the witness cosignature key (type 0x04)' }),
            url: Type.Optional(Type.String()),
          }),
        ),
      },
      { description: 'The transparency log (docs/log.md)' },
    ),
  ),
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

/** A passkey signature as the action log publishes it (docs/ebus.md, "The action log record"). */
export const LoggedAssertionSchema = Type.Object(
  {
    credential_id: Type.String(),
    authenticator_data: Type.String(),
    client_data_json: Type.String(),
    signature: Type.String(),
  },
  { description: 'The passkey assertion, each part base64url as the client sent it' },
);

/** The action log record (docs/ebus.md, "The action log record"). */
export const ActionLogSchema = Type.Object({
  id: Type.String(),
  hash: Type.String(),
  name: Type.String(),
  wallet: Type.String(),
  organization_id: Type.String({
    description: 'The organization it was executed in (the signed text names it)',
  }),
  signature_type: Type.Union([Type.Literal('eoa'), Type.Literal('webauthn')]),
  signature: Type.Union([
    Type.String({ description: 'eoa: the 0x hex signature' }),
    LoggedAssertionSchema,
  ]),
  nonce: Type.Integer(),
  params: Type.Object({}, { additionalProperties: true }),
  expires: Type.Union([Type.String(), Type.Null()], {
    description: 'As signed (part of the signed text); null for actions logged before it was kept',
  }),
  object_id: Type.Union([Type.String(), Type.Null()]),
  template_id: Type.Union([Type.String(), Type.Null()]),
  template_version: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'The template version it was applied with (GET /public/templates/{id}/versions/{version}); null for actions logged before versions were kept',
  }),
  fee_wei: Type.String(),
  batch_id: Type.Union([Type.String(), Type.Null()]),
  log_index: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], {
      description:
        "Its leaf's index in the transparency log (docs/log.md); null until its batch is sealed into the log",
    }),
  ),
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
      replayed: Type.Optional(
        Type.Boolean({
          description:
            'true when this signed action had been applied before: the answer it gave then (nothing charged or changed)',
        }),
      ),
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
