-- Traces and queue metrics (docs/self-hosting.md, "Traces" and "Metrics").
--
-- The W3C traceparent of the request whose action queued the delivery, written by the same
-- INSERT as the row (NULL while tracing is off), so whichever process sends the delivery,
-- now or after a restart, continues that request's trace. No default: adding it rewrites
-- nothing.
ALTER TABLE webhook_deliveries ADD COLUMN trace_parent text;

-- /metrics counts the deliveries that ended failed or stopped, by status, from this index
-- alone. Only rows with finished_at set are in it (a final failure, rare), so the outbox's
-- INSERT and its claims touch it no more than before.
CREATE INDEX webhook_deliveries_final ON webhook_deliveries (status)
  WHERE finished_at IS NOT NULL;
