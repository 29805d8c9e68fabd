-- What an outside verifier still lacked (issue 18 follow-up, docs/batches.md, docs/objects.md).

-- Template versions: an object's chain hashes its template's faces at every action and, at
-- the mint, its name, description and category. `version` counts the changes of those four
-- fields (1 at creation); each version's content is kept, so a chain can be replayed with
-- the template as it was at each action. Existing templates start at version 1 (as they are
-- now: earlier contents were never kept). Triggers keep both, whatever writes a template.
ALTER TABLE templates ADD COLUMN version integer NOT NULL DEFAULT 1;
CREATE TABLE template_versions (
  template_id text NOT NULL REFERENCES templates (id),
  version     integer NOT NULL CHECK (version > 0),
  name        text NOT NULL,
  description text NOT NULL,
  category    text NOT NULL,
  faces       jsonb NOT NULL,
  created_at  timestamptz(3) NOT NULL,
  PRIMARY KEY (template_id, version)
);
INSERT INTO template_versions (template_id, version, name, description, category, faces, created_at)
SELECT id, 1, name, description, category, faces, updated_at FROM templates;

CREATE FUNCTION ons_template_version_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    NEW.version := 1;
  ELSIF (NEW.name, NEW.description, NEW.category, NEW.faces)
      IS NOT DISTINCT FROM (OLD.name, OLD.description, OLD.category, OLD.faces) THEN
    NEW.version := OLD.version;
  ELSE
    NEW.version := OLD.version + 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER templates_version_number BEFORE INSERT OR UPDATE ON templates
  FOR EACH ROW EXECUTE FUNCTION ons_template_version_number();

CREATE FUNCTION ons_template_version_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO template_versions (template_id, version, name, description, category, faces,
    created_at)
  VALUES (NEW.id, NEW.version, NEW.name, NEW.description, NEW.category, NEW.faces,
    NEW.updated_at);
  RETURN NULL;
END $$;
CREATE TRIGGER templates_version_keep_insert AFTER INSERT ON templates
  FOR EACH ROW EXECUTE FUNCTION ons_template_version_keep();
CREATE TRIGGER templates_version_keep_update AFTER UPDATE ON templates
  FOR EACH ROW WHEN (NEW.version <> OLD.version) EXECUTE FUNCTION ons_template_version_keep();

-- The template version each action was applied with (NULL for actions logged before).
ALTER TABLE action_logs ADD COLUMN template_version integer;

-- Batch content version 2 (adds the affected objects' integrity hashes and, per action, the
-- organization, the integrity hash it left and the template version): every batch whose
-- header is not written yet is sealed with it; sealed batches keep version 1.
ALTER TABLE batches ALTER COLUMN version SET DEFAULT 2;
UPDATE batches SET version = 2 WHERE hash IS NULL;

-- `GET /public/wallets/{address}/signers/{signer}`: every link of an EOA to a wallet, removed
-- ones included (the actions it signed while linked stay checkable).
CREATE INDEX credentials_eoa_links ON credentials (external_id, wallet_id) WHERE type = 'eoa';
