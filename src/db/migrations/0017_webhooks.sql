-- Webhooks and their outbox of deliveries (issue 20, docs/webhooks.md). One delivery per action
-- per webhook holds by construction (one insert per applied action, in its own transaction),
-- so no unique index pays for it on every write; free space on each page (fillfactor) lets
-- claims update rows in place.

CREATE TABLE webhooks (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  url text NOT NULL,
  description text NOT NULL DEFAULT '',
  -- [{template_id, actions: [names], addresses: [lowercase 0x]}]; empty lists mean all.
  rules jsonb NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  -- The key itself, not a hash: an HMAC can only be made with the key. Never listed or logged.
  signing_key bytea NOT NULL,
  -- After a rotation the old key signs too, until previous_key_until (24 h).
  previous_signing_key bytea,
  previous_key_until timestamptz,
  -- When is_active last became true: failures before it do not count towards switching off.
  active_since timestamptz NOT NULL,
  created_at timestamptz(3) NOT NULL,
  updated_at timestamptz(3) NOT NULL,
  deleted_at timestamptz(3)
);
-- The hook in the group statement looks up an organization's active webhooks per action.
CREATE INDEX webhooks_org_active ON webhooks (organization_id)
  WHERE is_active AND deleted_at IS NULL;
CREATE INDEX webhooks_org_list ON webhooks (organization_id, created_at, id)
  WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  webhook_id text NOT NULL REFERENCES webhooks (id),
  action_id text NOT NULL,
  -- {action, object} as applied, kept as text so the body keeps its field order.
  event json NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'retrying', 'done', 'failed', 'stopped')),
  -- [{when_created, status_code, duration_ms, error}], oldest first.
  attempts jsonb NOT NULL DEFAULT '[]',
  -- Attempts since the delivery was last queued (creation, redeliver, replay): picks the wait.
  round_attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt is due; NULL once final.
  next_attempt_at timestamptz(3),
  -- A worker's claim lasts until then (a lease): one that dies mid-attempt leaves the delivery
  -- due again when it ends. Not indexed, so a claim is a HOT update that touches no index.
  leased_until timestamptz(3),
  -- The claim that may record the outcome: a late answer to an expired claim changes nothing.
  claim_id text,
  -- When it became failed or stopped (the rolling hour that switches a webhook off).
  finished_at timestamptz(3),
  created_at timestamptz(3) NOT NULL,
  updated_at timestamptz(3) NOT NULL
) WITH (fillfactor = 80);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
  WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at, id);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (webhook_id, finished_at)
  WHERE finished_at IS NOT NULL;
