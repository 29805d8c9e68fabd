-- The event bus (issue 7): what the action log list and mint need beyond 0002.

-- mint takes an optional collection_id (docs/ebus.md, "Actions and their params"); the public list
-- filters by it. IF NOT EXISTS: the objects feature may add the same column in its own migration.
ALTER TABLE objects ADD COLUMN IF NOT EXISTS collection_id text;

-- GET /ebus/action-logs?wallet= within an organization, newest first.
CREATE INDEX IF NOT EXISTS action_logs_org_wallet
  ON action_logs (organization_id, wallet, created_at DESC, id DESC);
