-- Low balance (docs/policies.md, "Low balance"): an organization's threshold, and whether
-- its owners and admins have been told about the current crossing.
ALTER TABLE organizations ADD COLUMN low_balance_wei numeric(78, 0)
  CHECK (low_balance_wei >= 0);
-- When the last notice went (at most one per 24 hours).
ALTER TABLE organizations ADD COLUMN low_balance_notified_at timestamptz(3);
-- True while the balance is at or above the threshold, or below it and not yet told: the
-- notifier claims an armed organization below its threshold (and disarms it); one at or
-- above its threshold is armed again.
ALTER TABLE organizations ADD COLUMN low_balance_armed boolean NOT NULL DEFAULT true;
CREATE INDEX organizations_low_balance ON organizations (id)
  WHERE low_balance_wei IS NOT NULL AND deleted_at IS NULL;
