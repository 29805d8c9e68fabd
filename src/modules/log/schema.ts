import { Type, type Static } from 'typebox';
import { IdParam } from '../../lib/ids.js';
import { ActionLogSchema } from '../ebus/index.js';

const Hex = (what: string) => Type.String({ description: `${what}: 0x + 64 lowercase hex` });
const Size = (what: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: what });

export const InclusionQuery = Type.Object(
  {
    hash: Type.String({
      pattern: '^0x[0-9a-fA-F]{64}$',
      description:
        "the entry: an action hash (a private action's entry is its batch commitment), 0x + 64 hex",
    }),
    size: Size('the tree size to prove inclusion in (a checkpoint’s)'),
  },
  { additionalProperties: false },
);
export type InclusionQuery = Static<typeof InclusionQuery>;

export const ConsistencyQuery = Type.Object(
  {
    from: Size('the older tree size (at least 1)'),
    to: Size('the newer tree size'),
  },
  { additionalProperties: false },
);
export type ConsistencyQuery = Static<typeof ConsistencyQuery>;

export const InclusionResponse = Type.Object({
  log_index: Type.Integer(),
  tree_size: Type.Integer(),
  leaf_hash: Hex('the RFC 6962 leaf hash H(0x00 ‖ entry)'),
  proof: Type.Array(Hex('a node hash'), { description: 'RFC 9162 inclusion path, leaf upwards' }),
});

export const ConsistencyResponse = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  proof: Type.Array(Hex('a node hash'), { description: 'RFC 9162 consistency proof' }),
});

export const ReceiptParams = Type.Object({ id: IdParam('action') });

export const ReceiptResponse = Type.Object({
  version: Type.Literal(1),
  network: Type.String({
    description: 'the network id the action text names (GET /public/network)',
  }),
  action: ActionLogSchema,
  log_index: Type.Integer(),
  tree_size: Type.Integer(),
  leaf_hash: Hex("the action's RFC 6962 leaf hash"),
  inclusion_proof: Type.Array(Hex('a node hash')),
  checkpoint: Type.String({
    description: 'the signed checkpoint (C2SP tlog-checkpoint) with its cosignatures',
  }),
  private: Type.Optional(
    Type.Object(
      {
        leaf: Type.String({ description: "the leaf's data: the batch commitment, 0x + 64 hex" }),
        salt: Type.Optional(Type.String({ description: 'its salt (its organization only)' })),
        integrity_hash: Type.Optional(Type.String()),
      },
      {
        description:
          'An action sealed private: its leaf is H("ons private action v1" ‖ 0x00 ‖ salt ‖ hash ‖ integrity_hash), not its hash',
      },
    ),
  ),
});
