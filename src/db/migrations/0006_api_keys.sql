-- API keys (docs/api.md, "API keys"). The secret is kept only as its SHA-256 (hex);
-- permissions are the flat names (`objects.read`, …) the key was granted at creation.
CREATE TABLE api_keys (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  -- the wallet that created the key; the key acts for it and stops when it leaves
  created_by       text NOT NULL REFERENCES wallets (id),
  name             text NOT NULL,
  secret_hash      text NOT NULL UNIQUE,
  permissions      text[] NOT NULL,
  expires_at       timestamptz(3) NOT NULL,
  last_used_at     timestamptz(3),
  deleted_at       timestamptz(3),
  created_at       timestamptz(3) NOT NULL,
  updated_at       timestamptz(3) NOT NULL
);
-- the list (newest first, keyset paging) and the live-key count, both per organization
CREATE INDEX api_keys_org_created ON api_keys (organization_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;
CREATE INDEX api_keys_org_name ON api_keys (organization_id, name) WHERE deleted_at IS NULL;
