-- A retry waiting for a first request that runs in another process is woken when that request
-- ends (docs/api.md, "Idempotent requests"; docs/decisions.md, 2026-11-30): the change that
-- ends it is announced on the channel `ons_idempotency` from its own transaction, as the
-- revocations are (migration 0041), so PostgreSQL delivers the notice when, and only if, that
-- transaction commits. Each API process listens for it on its one listening connection
-- (src/notices.ts) and the retries waiting there on that key read it again.
--
-- A trigger, so that whatever ends a first request wakes its retries: the answer recorded
-- (`status` set, src/modules/idempotency/repo.ts, completeKey) and the key given back or
-- deleted before it was answered (releaseKey, an operator's statement, the sweeper on an
-- expired key). Its WHEN clauses, evaluated without calling the function, pass only those
-- rows: taking a key (an insert, or the update of a claim over an expired or stale key) and
-- marking a first request running (`locked_at`) announce nothing.
--
-- The payload names the key without telling it: the SHA-256, in hex, of the row's scope, route
-- and key (itself the SHA-256 of the client's key) joined by newlines, which each process
-- computes alike for the keys it waits on (src/modules/idempotency/waiting.ts). Always 64
-- bytes, far below the 8000 a notification may hold, however long the scope or route.
CREATE FUNCTION ons_announce_idempotency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ons_idempotency', encode(sha256(convert_to(
    OLD.scope || E'\n' || OLD.route || E'\n' || OLD.key, 'UTF8')), 'hex'));
  RETURN NULL;
END $$;

CREATE TRIGGER idempotency_keys_answered AFTER UPDATE ON idempotency_keys FOR EACH ROW
  WHEN (OLD.status IS NULL AND NEW.status IS NOT NULL)
  EXECUTE FUNCTION ons_announce_idempotency();
CREATE TRIGGER idempotency_keys_released AFTER DELETE ON idempotency_keys FOR EACH ROW
  WHEN (OLD.status IS NULL)
  EXECUTE FUNCTION ons_announce_idempotency();
