-- Deliveries an organization queued again with a replay, per UTC day (docs/webhooks.md,
-- "Replays"): a replay sends to whatever public address the webhook names, so its volume is
-- bounded per organization and day, not only per call.
CREATE TABLE webhook_replay_usage (
  organization_id text NOT NULL REFERENCES organizations (id),
  day             date NOT NULL,
  deliveries      integer NOT NULL CHECK (deliveries >= 0),
  PRIMARY KEY (organization_id, day)
);
