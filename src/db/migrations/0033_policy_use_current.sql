-- Spend policies (docs/policies.md, "How the caps stay exact"): a policy's use row keeps its
-- current bucket and the sum of the rest of its window in scalars beside the ring. A group
-- adds to the current bucket and checks the caps against `cur + hist`, both read from the row
-- it has just locked, so the check is exact in any process and costs no sum over the ring.
-- The ring (completed buckets only, from now on) is rewritten only when the current bucket
-- rolls over: once per bucket per policy instead of once per group.
ALTER TABLE policy_usage
  ADD COLUMN cur_bucket bigint NOT NULL DEFAULT -1,
  ADD COLUMN cur_spent numeric NOT NULL DEFAULT 0,
  ADD COLUMN cur_actions integer NOT NULL DEFAULT 0,
  -- The ring's use within the window that ends at `cur_bucket`, set when it rolls over.
  ADD COLUMN hist_spent numeric NOT NULL DEFAULT 0,
  ADD COLUMN hist_actions bigint NOT NULL DEFAULT 0;

-- One element of an array set, as a value (an UPDATE's `a[i] = v` always rebuilds `a`; this
-- lets a CASE keep the old array untouched when nothing rolls over).
CREATE FUNCTION ons_array_set(a anyarray, i integer, v anyelement) RETURNS anyarray
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  a[i] := v;
  RETURN a;
END $$;

-- No statement needs to know any more whether another writer came between.
ALTER TABLE organizations DROP COLUMN policy_use_seq;
