-- Spend policies (docs/policies.md, "How caps stay exact"): moved by every group statement
-- that writes an organization's policy use, under the organization's row lock. A statement
-- that finds it one past what its process last read or wrote knows that no other writer came
-- between, so the checks its process made against the use it remembers were exact and the
-- caps need no second look; any other value and the statement sums the windows again.
ALTER TABLE organizations ADD COLUMN policy_use_seq bigint NOT NULL DEFAULT 0;
