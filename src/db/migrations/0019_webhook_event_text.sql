-- A delivery's event as the exact text of its body's `event` member (docs/webhooks.md): the
-- group statement writes it without PostgreSQL parsing it as JSON, and a worker puts it into
-- the body as it is, without parsing it and writing it out again. json's text is kept as is.
ALTER TABLE webhook_deliveries ALTER COLUMN event TYPE text USING event::text;
