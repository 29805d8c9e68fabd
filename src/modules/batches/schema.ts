import { Type, type Static } from 'typebox';
import { IdParam } from '../../lib/ids.js';
import { ListEnvelope, listQueryProperties } from '../../lib/list.js';

const Hash = (what: string) =>
  Type.String({ description: `${what}: 0x + 64 lowercase hex, or "" before it exists` });
const MaybeTime = (what: string) =>
  Type.String({ description: `${what} (ISO 8601), or "" before it happens` });

export const BatchStatus = Type.Union([
  Type.Literal('building'),
  Type.Literal('proving'),
  Type.Literal('proven'),
  Type.Literal('finalized'),
  Type.Literal('failed'),
]);

export const BatchProofSchema = Type.Object({
  type: Type.String({ description: '"ed25519-attestation" for the default prover' }),
  value: Type.String({ description: 'the 64-byte Ed25519 signature of the commitment, 0x + hex' }),
  public_values: Type.String({ description: 'what was signed: the commitment' }),
  vkey: Type.String({ description: 'the raw 32-byte Ed25519 public key, 0x + hex' }),
  message: Type.String(),
});

/**
 * How many of each batch's actions an item of `GET /batches` lists in `affected_actions`: the
 * first in execution order (`actions_count` is the total; `GET /batches/{batchId}` lists all).
 */
export const LIST_AFFECTED_ACTIONS = 20;

/** A transaction batch (docs/batches.md). */
export const Batch = Type.Object({
  id: Type.String(),
  sequence: Type.Integer(),
  hash: Hash('H(RFC 8785 JSON of the header)'),
  prev_hash: Hash("the previous batch's hash (genesis: 0x + 64 zeros)"),
  integrity_root: Hash("RFC 6962 root over the affected objects' integrity hashes"),
  prev_integrity_root: Hash("the previous batch's integrity_root"),
  sender: Type.String({ description: 'the anchoring account; "" when anchoring is off' }),
  l2_tx_hash: Type.String({ description: 'the anchoring transaction; "" until posted' }),
  l2_finalization_tx_hash: Type.String({
    description: 'the block holding the anchoring transaction once final; "" until then',
  }),
  commitment: Hash('H(prev_integrity_root ‖ integrity_root ‖ actions_hash ‖ sequence)'),
  log_tree_size: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'The transparency log size after this batch (docs/log.md): its actions are leaves [log_tree_size - actions_count, log_tree_size); null until it is in the log',
  }),
  actions_hash: Hash('RFC 6962 root over the action hashes in execution order'),
  affected_actions: Type.Array(
    Type.Object({
      id: Type.String(),
      hash: Type.String(),
      name: Type.String(),
      alias: Type.String({ description: "the action's object id" }),
      private: Type.Boolean({
        description:
          'an action on an object private now or when the batch sealed: name is "" and hash is its actions_hash leaf (docs/batches.md)',
      }),
    }),
    {
      description: `its actions in execution order: every one in GET /batches/{batchId}, only the first ${LIST_AFFECTED_ACTIONS} in an item of GET /batches (actions_count is the total)`,
    },
  ),
  actions_count: Type.Integer(),
  total_fee: Type.String({ description: 'the sum of its actions’ fees in tokens' }),
  total_fee_wei: Type.String(),
  version: Type.Integer({
    description: 'the layout of its content (1 to 4; docs/batches.md): new batches are 4',
  }),
  ipfs_url: Type.String({ description: 'ipfs:// + CIDv1 (raw, sha2-256) of its content' }),
  superseded_ipfs_urls: Type.Array(Type.String(), {
    description:
      'the CIDs its content had before it was re-published, each once, in the order they were last replaced (not the one it has now)',
  }),
  status: BatchStatus,
  proof: Type.Union([BatchProofSchema, Type.Null()]),
  proof_id: Type.String(),
  error: Type.String(),
  challenge_window_end: MaybeTime('sealed time + BATCH_CHALLENGE_WINDOW_SECONDS'),
  when_completed: MaybeTime('when the batch became finalized'),
  when_modified: Type.String({ format: 'date-time' }),
  when_created: Type.String({ format: 'date-time' }),
});
export type Batch = Static<typeof Batch>;

export const BatchList = ListEnvelope('batches', Batch);
export type BatchList = Static<typeof BatchList>;

export const ListBatchesQuery = Type.Object({
  ...listQueryProperties,
  status: Type.Optional(BatchStatus),
});
export type ListBatchesQuery = Static<typeof ListBatchesQuery>;

export const BatchParams = Type.Object({ batchId: IdParam('batch') });
export const ProofParams = Type.Object({ batchId: IdParam('batch'), actionId: IdParam('action') });

export const InclusionProofSchema = Type.Object({
  leaf_index: Type.Integer({ description: "the action's position in execution order, from 0" }),
  tree_size: Type.Integer(),
  audit_path: Type.Array(Type.String(), { description: 'RFC 6962 PATH, from the leaf upwards' }),
  leaf_hash: Type.String({
    description: "H(0x00 ‖ the action hash's 32 bytes), or ‖ its commitment when sealed private",
  }),
  root: Type.String({ description: "the batch's actions_hash" }),
  salt: Type.Optional(
    Type.String({
      description:
        'only for an action sealed private (content version 4) whose object is public now: the salt of its commitment, 0x + 64 hex; the leaf is then H(0x00 ‖ commitment)',
    }),
  ),
});
export type InclusionProofSchema = Static<typeof InclusionProofSchema>;
