-- The transparency log (issue 33, docs/log.md): one append-only RFC 6962 tree over every
-- applied action, in batch order, with signed checkpoints, tiles, proofs and witnesses.

-- One row per leaf, in tree order. `leaf` is the leaf's data: the 32 bytes of the action's
-- leaf in its batch's actions_hash (its action hash; for a private action of a content
-- version 4 batch, its salted commitment), so the log shows nothing a batch does not.
CREATE TABLE log_entries (
  log_index bigint PRIMARY KEY,
  action_id text NOT NULL UNIQUE,
  leaf      bytea NOT NULL
);
CREATE INDEX log_entries_leaf ON log_entries (leaf);

-- The tree's hashes above the leaves, as C2SP tlog-tiles: tile (level, idx) holds up to 256
-- hashes of tree level 8 × level, nodes idx × 256 … idx × 256 + 255, each 32 bytes in order.
-- Only complete nodes are written, so a tile only grows, and a full tile never changes.
-- Level-0 tiles (the leaf hashes) are computed from log_entries.
CREATE TABLE log_tiles (
  level smallint NOT NULL CHECK (level >= 1),
  idx   bigint NOT NULL,
  data  bytea NOT NULL,
  PRIMARY KEY (level, idx)
);

-- One signed checkpoint per batch appended to the log, in batch order. `note` is the
-- signed note (body, blank line, the log's signature line).
CREATE TABLE log_checkpoints (
  batch_sequence bigint PRIMARY KEY,
  batch_id       text NOT NULL UNIQUE,
  tree_size      bigint NOT NULL,
  root           bytea NOT NULL,
  note           text NOT NULL,
  created_at     timestamptz(3) NOT NULL
);
CREATE INDEX log_checkpoints_size ON log_checkpoints (tree_size);

-- Witnesses' cosignatures of checkpoints (C2SP tlog-cosignature), checked before they are
-- stored; `witness` is the witness key's name.
CREATE TABLE log_cosignatures (
  batch_sequence bigint NOT NULL,
  witness        text NOT NULL,
  line           text NOT NULL,
  created_at     timestamptz(3) NOT NULL,
  PRIMARY KEY (batch_sequence, witness)
);

-- The latest tree size each configured witness cosigned (the `old` of its next request).
CREATE TABLE log_witness_state (
  witness    text PRIMARY KEY,
  tree_size  bigint NOT NULL,
  updated_at timestamptz(3) NOT NULL
);

-- The log's Ed25519 key when LOG_SIGNING_KEY is not set: made by the first instance to start.
CREATE TABLE log_keys (
  id         text PRIMARY KEY,
  seed       text NOT NULL,
  created_at timestamptz(3) NOT NULL
);

-- Each batch's place in the log: the tree size after its actions (NULL until appended).
ALTER TABLE batches ADD COLUMN log_tree_size bigint;
