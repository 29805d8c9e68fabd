-- Revocations reach every process of the service at once (docs/auth.md, "Revocation on every
-- server"; docs/decisions.md, 2026-11-29). Whatever ends a session, revokes or changes an API
-- key, or changes an active membership announces it on the channel `ons_revocations` from its
-- own transaction: PostgreSQL delivers a notification when, and only if, that transaction
-- commits, so a rolled-back change announces nothing. Each API process listens on a connection
-- of its own (src/revocations.ts) and drops what it cached of what the notice names:
-- `key <id>`, `session <id>`, or `all` for a membership, which many cached checks rest on (a
-- session's role, the keys its wallet created, the event bus's signers).
--
-- Triggers, so that every writer announces, whichever module or tool it is, as migration 0020's
-- do for template versions. Each fires only for the rows whose checked columns changed (the
-- WHEN clause, evaluated without calling the function): a refresh-token rotation and a key's
-- last use announce nothing. The organizations table, which every group statement of the
-- event bus updates, has none: deleting an organization ends its memberships in the same
-- transaction, and those announce it.
CREATE FUNCTION ons_announce_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  notice text := TG_ARGV[0];
BEGIN
  IF notice <> 'all' THEN
    notice := notice || ' ' || OLD.id;
    -- A notification holds at most 8000 bytes. The service's ids are short; a longer one
    -- must not make the revocation fail, so it is announced as `all`.
    IF octet_length(notice) > 1000 THEN
      notice := 'all';
    END IF;
  END IF;
  PERFORM pg_notify('ons_revocations', notice);
  RETURN NULL;
END $$;

-- An API key's check reads these columns (src/modules/api-keys/repo.ts, findForVerification).
CREATE TRIGGER api_keys_revoked AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN ((OLD.secret_hash, OLD.organization_id, OLD.created_by, OLD.permissions, OLD.expires_at,
      OLD.deleted_at)
    IS DISTINCT FROM (NEW.secret_hash, NEW.organization_id, NEW.created_by, NEW.permissions,
      NEW.expires_at, NEW.deleted_at))
  EXECUTE FUNCTION ons_announce_revocation('key');
CREATE TRIGGER api_keys_removed AFTER DELETE ON api_keys FOR EACH ROW
  WHEN (OLD.deleted_at IS NULL)
  EXECUTE FUNCTION ons_announce_revocation('key');

-- A session's check reads these (src/modules/auth/repo/sessions.ts, sessionState);
-- `last_used_at` only ever moves on, which lengthens a session, never shortens it.
CREATE TRIGGER sessions_ended AFTER UPDATE ON sessions FOR EACH ROW
  WHEN ((OLD.ended_at, OLD.wallet_id, OLD.created_at)
    IS DISTINCT FROM (NEW.ended_at, NEW.wallet_id, NEW.created_at))
  EXECUTE FUNCTION ons_announce_revocation('session');
CREATE TRIGGER sessions_removed AFTER DELETE ON sessions FOR EACH ROW
  WHEN (OLD.ended_at IS NULL)
  EXECUTE FUNCTION ons_announce_revocation('session');

-- Only a membership that was active and bound to a wallet can be behind a cached check; an
-- invitation's changes, and a membership that begins, announce nothing.
CREATE TRIGGER members_changed AFTER UPDATE ON members FOR EACH ROW
  WHEN (OLD.status = 'active' AND OLD.wallet_id IS NOT NULL
    AND (OLD.organization_id, OLD.wallet_id, OLD.role, OLD.status)
      IS DISTINCT FROM (NEW.organization_id, NEW.wallet_id, NEW.role, NEW.status))
  EXECUTE FUNCTION ons_announce_revocation('all');
CREATE TRIGGER members_removed AFTER DELETE ON members FOR EACH ROW
  WHEN (OLD.status = 'active' AND OLD.wallet_id IS NOT NULL)
  EXECUTE FUNCTION ons_announce_revocation('all');
