-- Spend policies (docs/policies.md): limits on what one organization's key, wallet or
-- template — or the whole organization — may spend of its balance.

CREATE TABLE policies (
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  name             text NOT NULL,
  -- What it binds: every action of the organization, those signed by a member wallet, those
  -- submitted with an API key, or those acting on a template's objects.
  target_type      text NOT NULL
    CHECK (target_type IN ('organization', 'wallet', 'api_key', 'template')),
  target_id        text,
  -- The rolling window of both caps below.
  period           text CHECK (period IN ('minute', 'hour', 'day', '30d')),
  spend_cap_wei    numeric(78, 0) CHECK (spend_cap_wei >= 0),
  max_actions      integer CHECK (max_actions >= 0),
  allowed_actions  text[],
  denied_actions   text[],
  allowed_templates text[],
  denied_templates text[],
  max_fee_wei      numeric(78, 0) CHECK (max_fee_wei >= 0),
  created_by_wallet_id  text,
  created_by_api_key_id text,
  created_at       timestamptz(3) NOT NULL,
  updated_at       timestamptz(3) NOT NULL,
  CHECK ((target_type = 'organization') = (target_id IS NULL)),
  CHECK ((spend_cap_wei IS NULL AND max_actions IS NULL) OR period IS NOT NULL)
);
CREATE INDEX policies_org ON policies (organization_id, id);

-- A policy's use over its window: a ring of 61 buckets, each 1/60 of the window
-- (bucket = floor(epoch ms / bucket ms), slot = bucket mod 61). The group statement of the
-- event bus updates it after it has locked the organization's balance row, so the use of an
-- organization's policies only ever changes under that lock; the window's sum counts every
-- bucket that overlaps it (never less than the true rolling use).
CREATE TABLE policy_usage (
  policy_id        text PRIMARY KEY REFERENCES policies (id) ON DELETE CASCADE,
  organization_id  text NOT NULL REFERENCES organizations (id),
  buckets          bigint[] NOT NULL DEFAULT array_fill(-1::bigint, ARRAY[61]),
  spent            numeric[] NOT NULL DEFAULT array_fill(0::numeric, ARRAY[61]),
  actions          integer[] NOT NULL DEFAULT array_fill(0, ARRAY[61])
);

-- Moved by every change of an organization's policies, in the same transaction: the group
-- statement refuses to write against a policy set other than the one it checked.
ALTER TABLE organizations ADD COLUMN policy_version bigint NOT NULL DEFAULT 0;
