-- The event bus hot path (issue 7 acceptance 10, docs/performance.md).

-- A group of actions is written by ONE statement (src/modules/ebus/group-write.ts) whose
-- writes are guarded by the state its checks read. This aborts the statement, and so
-- everything it wrote, when a guard did not hold. ONS02: the balance did not cover the fees;
-- ONS01: anything else moved (a nonce, an object, a template).
CREATE FUNCTION ons_group_guard(nonces_ok boolean, objects_ok boolean, templates_ok boolean,
  debit_ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT nonces_ok THEN
    RAISE EXCEPTION 'group guard: a wallet''s nonce moved' USING ERRCODE = 'ONS01';
  END IF;
  IF NOT objects_ok THEN
    RAISE EXCEPTION 'group guard: an object changed' USING ERRCODE = 'ONS01';
  END IF;
  IF NOT templates_ok THEN
    RAISE EXCEPTION 'group guard: a template changed' USING ERRCODE = 'ONS01';
  END IF;
  IF NOT debit_ok THEN
    RAISE EXCEPTION 'group guard: the balance does not cover the fees' USING ERRCODE = 'ONS02';
  END IF;
  RETURN true;
END $$;

-- Foreign keys from the three tables every action writes. Each inserted row ran a trigger that
-- share-locked the referenced organization, template or wallet row; on the organization row,
-- which every group also updates (the balance), those locks become MultiXacts. Measured: about
-- a quarter of PostgreSQL's CPU per action. Nothing they point at is ever deleted
-- (organizations are closed with deleted_at; templates and wallets have no delete), and the
-- only writer of these rows is the group statement, with ids it has just read.
ALTER TABLE objects DROP CONSTRAINT objects_organization_id_fkey;
ALTER TABLE objects DROP CONSTRAINT objects_template_id_fkey;
ALTER TABLE action_logs DROP CONSTRAINT action_logs_organization_id_fkey;
ALTER TABLE action_logs DROP CONSTRAINT action_logs_wallet_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_organization_id_fkey;

-- Objects without a place need no entry in the geohash index (the geohash filter's prefix
-- condition implies geo_hash IS NOT NULL, so the planner still uses it).
DROP INDEX objects_public_geo;
CREATE INDEX objects_public_geo ON objects (geo_hash text_pattern_ops, created_at DESC, id DESC)
  WHERE is_public AND geo_hash IS NOT NULL;
