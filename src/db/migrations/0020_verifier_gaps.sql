-- What an outside verifier still lacked (issue 18 follow-up, docs/batches.md, docs/objects.md).

-- Template versions: an object's chain hashes its template's faces at every action and, at
-- the mint, its name, description and category. `version` counts the changes of those four
-- fields (1 at creation); each version's content is kept, so a chain can be replayed with
-- the template as it was at each action. Existing templates start at version 1 (as they are
-- now: earlier contents were never kept).
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
