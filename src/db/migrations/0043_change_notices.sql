-- Changes that must reach every process's memory at once, announced as the revocations are
-- (migration 0041; docs/decisions.md, 2026-11-30): from the changing transaction, so
-- PostgreSQL delivers the notice when, and only if, that transaction commits. Each API process
-- listens for them on the connection it listens for revocations on, a worker that delivers
-- webhooks with SECRETS_KEY set for the webhook keys' alone (src/notices.ts).

-- The public list (docs/objects.md, "The public list"): every API process keeps its answers up
-- to PUBLIC_LIST_CACHE_MS, and must forget them once something they show is no longer public.
-- objects.is_public changes only with its template's flag, in the template's switch's
-- transaction (src/modules/templates/service.ts), so the switch is announced from `templates`,
-- one row per switch; `objects`, which every group statement of the event bus inserts into and
-- updates, gets no trigger on those (a DELETE trigger is not called for them). The payload is
-- the same for every change (the cache is emptied whole), so one transaction's notices arrive
-- once.
CREATE FUNCTION ons_announce_public_list() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A statement's deleted objects: only when one of them was public.
  IF TG_LEVEL = 'STATEMENT' AND TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT 1 FROM gone WHERE is_public) THEN
      RETURN NULL;
    END IF;
  END IF;
  PERFORM pg_notify('ons_public_list', 'private');
  RETURN NULL;
END $$;

-- A template made private (its objects are made private in the same transaction), and a
-- public template deleted (its faces and actions leave the list). A template made public, or
-- any other change, announces nothing: the list may show it up to PUBLIC_LIST_CACHE_MS late.
CREATE TRIGGER templates_made_private AFTER UPDATE ON templates FOR EACH ROW
  WHEN (OLD.is_public AND NOT NEW.is_public)
  EXECUTE FUNCTION ons_announce_public_list();
CREATE TRIGGER templates_public_removed AFTER DELETE ON templates FOR EACH ROW
  WHEN (OLD.is_public)
  EXECUTE FUNCTION ons_announce_public_list();
-- The service deletes no object; whatever else does (an operator's statement) is announced
-- once per statement that deleted a public one.
CREATE TRIGGER objects_public_removed AFTER DELETE ON objects
  REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
  EXECUTE FUNCTION ons_announce_public_list();
CREATE TRIGGER objects_truncated AFTER TRUNCATE ON objects
  FOR EACH STATEMENT EXECUTE FUNCTION ons_announce_public_list();
CREATE TRIGGER templates_truncated AFTER TRUNCATE ON templates
  FOR EACH STATEMENT EXECUTE FUNCTION ons_announce_public_list();

-- Webhook signing keys (docs/webhooks.md, "Rotating the signing key"): a process that
-- delivers remembers each key it opened (sealed under SECRETS_KEY) by its stored form. Once a
-- webhook's stored keys change (a rotation, the start's sealing pass) or it is deleted (or
-- soft-deleted), every process forgets what it opened for it: the payload is the webhook's id
-- (`all` for one too long for a notice). Webhooks are changed by their management only, never
-- on the event bus's path.
CREATE FUNCTION ons_announce_webhook_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ons_webhook_keys',
    CASE WHEN octet_length(OLD.id) > 1000 THEN 'all' ELSE OLD.id END);
  RETURN NULL;
END $$;
CREATE TRIGGER webhooks_keys_changed AFTER UPDATE ON webhooks FOR EACH ROW
  WHEN ((OLD.signing_key, OLD.previous_signing_key, OLD.deleted_at)
    IS DISTINCT FROM (NEW.signing_key, NEW.previous_signing_key, NEW.deleted_at))
  EXECUTE FUNCTION ons_announce_webhook_keys();
CREATE TRIGGER webhooks_removed AFTER DELETE ON webhooks FOR EACH ROW
  EXECUTE FUNCTION ons_announce_webhook_keys();
