-- Nothing private in public (issue 27, item 3; docs/batches.md, "What is public").

-- The batch salt key: 32 random bytes (hex) the first instance makes, from which each private
-- action's salt is derived (HMAC-SHA256). Kept like the batch key, in the database the
-- instances share; never served.
CREATE TABLE batch_salt_keys (
  id         text PRIMARY KEY,
  secret     text NOT NULL,
  created_at timestamptz(3) NOT NULL
);

-- The actions a batch's header sealed as private (their object was private when the header
-- was computed), in execution order: the content is rebuilt from this list, never from the
-- objects' visibility of the moment. NULL until the header is written.
ALTER TABLE batches ADD COLUMN private_actions text[];
-- The CIDs a batch's content had before it was re-published (history, oldest first).
ALTER TABLE batches ADD COLUMN superseded_ipfs_urls text[] NOT NULL DEFAULT '{}';
-- A sealed batch whose published content still shows private actions: the sealer
-- re-publishes it as content version 3 and clears the flag.
ALTER TABLE batches ADD COLUMN republish boolean NOT NULL DEFAULT false;

-- Content version 4 (private actions as salted commitments) for every batch whose header is
-- not written yet.
ALTER TABLE batches ALTER COLUMN version SET DEFAULT 4;
UPDATE batches SET version = 4 WHERE hash IS NULL;

-- Sealed batches: their private actions are frozen now; those holding any are re-published.
UPDATE batches b SET private_actions = coalesce(p.ids, '{}'), republish = p.ids IS NOT NULL
FROM batches b2 LEFT JOIN (
  SELECT a.batch_id, array_agg(a.id ORDER BY a.seq) AS ids
  FROM action_logs a JOIN objects o ON o.id = a.object_id
  WHERE NOT o.is_public AND a.batch_id IS NOT NULL
  GROUP BY a.batch_id) p ON p.batch_id = b2.id
WHERE b.id = b2.id AND b.hash IS NOT NULL;

CREATE INDEX batches_republish ON batches (sequence) WHERE republish;
