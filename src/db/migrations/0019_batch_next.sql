-- The batch after the building one is named in advance (docs/batches.md, "Joining"): when the
-- building batch is full, an action numbered past it joins the next batch in its own group
-- statement, by the id and range fixed here, instead of waiting without a batch to be adopted
-- by a later UPDATE (which was not HOT: batch_id is indexed). The next batch opens under
-- `next_id` with `next_capacity` numbers, starting where the building one ends.
ALTER TABLE batches ADD COLUMN next_id text;
ALTER TABLE batches ADD COLUMN next_capacity integer CHECK (next_capacity > 0);

-- The attempts column counts proving attempts as well as anchoring ones.
ALTER TABLE batches RENAME COLUMN anchor_attempts TO attempts;

DROP FUNCTION ons_batch_join();
-- As migration 0018's, and also the next batch's id and the end of its numbers (NULLs when it
-- is not named, as for a batch opened before this migration).
CREATE FUNCTION ons_batch_join() RETURNS TABLE (id text, seq_end bigint, next_id text, next_end bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(7411016001);
  RETURN QUERY SELECT b.id, b.seq_start + b.capacity, b.next_id,
    b.seq_start + b.capacity + b.next_capacity
  FROM batches b WHERE b.status = 'building';
END $$;
