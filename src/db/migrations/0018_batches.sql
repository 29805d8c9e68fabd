-- Transaction batches (issue 16, docs/batches.md).

-- What makes an action checkable by anyone: the signature as the action log publishes it (the
-- 0x hex string for an EOA; the passkey assertion's four base64url parts) and `expires` as
-- signed (the exact string, since it is part of the signed text). Rows logged before this
-- migration keep a NULL `expires`: it was never stored.
ALTER TABLE action_logs ADD COLUMN expires text;
UPDATE action_logs SET signature = CASE
  WHEN signature_type = 'eoa' THEN signature -> 'signature'
  ELSE jsonb_build_object(
    'credential_id', signature #> '{credential,id}',
    'authenticator_data', signature #> '{credential,response,authenticatorData}',
    'client_data_json', signature #> '{credential,response,clientDataJSON}',
    'signature', signature #> '{credential,response,signature}')
  END
WHERE signature ? 'type';

-- Execution order: one number per applied action from one sequence, taken inside the
-- action's group statement after it joined its batch (so every action of a batch precedes
-- every action of the next). Rows logged before this migration are numbered in log order.
CREATE SEQUENCE action_log_seq AS bigint;
ALTER TABLE action_logs ADD COLUMN seq bigint;
UPDATE action_logs a SET seq = n.seq
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS seq FROM action_logs) n
WHERE a.id = n.id;
SELECT setval('action_log_seq', coalesce((SELECT max(seq) FROM action_logs), 0) + 1, false);
ALTER TABLE action_logs ALTER COLUMN seq SET NOT NULL;
ALTER TABLE action_logs ALTER COLUMN seq SET DEFAULT nextval('action_log_seq');
CREATE INDEX action_logs_batch ON action_logs (batch_id, seq) WHERE batch_id IS NOT NULL;
-- Actions waiting for the next batch to open (their batch was full when they executed).
CREATE INDEX action_logs_unbatched ON action_logs (seq) WHERE batch_id IS NULL;

CREATE TABLE batches (
  id                      text PRIMARY KEY,
  sequence                bigint NOT NULL UNIQUE,
  status                  text NOT NULL
    CHECK (status IN ('building', 'proving', 'proven', 'finalized', 'failed')),
  -- The execution-order numbers (action_logs.seq) this batch takes: [seq_start, seq_start +
  -- capacity). Fixed when the batch opens.
  seq_start               bigint NOT NULL,
  capacity                integer NOT NULL CHECK (capacity > 0),
  version                 integer NOT NULL DEFAULT 1,
  -- The header (docs/batches.md, "The formulas"), set when sealed; NULL while building.
  hash                    text,
  prev_hash               text,
  integrity_root          text,
  prev_integrity_root     text,
  actions_hash            text,
  commitment              text,
  actions_count           integer NOT NULL DEFAULT 0,
  total_fee_wei           numeric(78, 0) NOT NULL DEFAULT 0,
  -- CIDv1 of the content (RFC 8785 JSON of {batch, actions}), which is rebuilt from the
  -- immutable action log rows when asked for and checked against it (docs/batches.md).
  ipfs_url                text,
  proof                   jsonb,
  proof_id                text,
  error                   text,
  -- Anchoring (docs/anchoring.md); NULL when anchoring is off.
  sender                  text,
  l2_tx_hash              text,
  l2_finalization_tx_hash text,
  anchor_attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at         timestamptz(3),
  sealed_at               timestamptz(3),
  challenge_window_end    timestamptz(3),
  completed_at            timestamptz(3),
  created_at              timestamptz(3) NOT NULL,
  updated_at              timestamptz(3) NOT NULL
);
-- At most one batch is building at a time.
CREATE UNIQUE INDEX batches_building ON batches ((true)) WHERE status = 'building';
CREATE INDEX batches_created ON batches (created_at DESC, id DESC);
CREATE INDEX batches_status_created ON batches (status, created_at DESC, id DESC);
-- The sealer's work: sealed batches not yet finalized or failed.
CREATE INDEX batches_open_work ON batches (sequence) WHERE status IN ('proving', 'proven');

-- The service's Ed25519 batch key (made by the first instance to start, shared by all).
CREATE TABLE batch_keys (
  id          text PRIMARY KEY,
  private_key text NOT NULL,
  public_key  text NOT NULL,
  created_at  timestamptz(3) NOT NULL
);

-- The group statement's join (src/modules/batches/repo/join.ts): every group of actions
-- holds this shared lock from its join until it commits; the sealer takes it exclusively
-- (briefly, with a lock timeout) to close a batch, which so waits for the groups that
-- joined it. Inside this VOLATILE function the SELECT takes a fresh snapshot after the lock
-- is held, so a group never joins a batch closed before it got the lock. Answers the
-- building batch and the first execution-order number beyond it; no row when none is open
-- (the actions then wait for the next batch, which adopts them when it opens).
CREATE FUNCTION ons_batch_join() RETURNS TABLE (id text, seq_end bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(7411016001);
  RETURN QUERY SELECT b.id, b.seq_start + b.capacity FROM batches b WHERE b.status = 'building';
END $$;
