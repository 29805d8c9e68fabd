-- Objects, templates, files and the indexer (issue 6, docs/objects.md).

-- A mint may name a collection (the event bus sets it from the mint's params); the public
-- list filters on it. Free-form text chosen by the minting organization; no table behind it.
ALTER TABLE objects ADD COLUMN collection_id text;

-- Autocomplete on the metadata name: a lower-cased copy, prefix-searchable through a
-- text_pattern_ops b-tree (LIKE 'term%' works whatever the database collation is).
ALTER TABLE objects ADD COLUMN name_lower text
  GENERATED ALWAYS AS (lower(coalesce(metadata ->> 'name', ''))) STORED;

-- Full-text search over name, description and category ('simple': no stemming, so any
-- language behaves the same).
ALTER TABLE objects ADD COLUMN search tsvector
  GENERATED ALWAYS AS (to_tsvector('simple'::regconfig,
    coalesce(metadata ->> 'name', '') || ' ' ||
    coalesce(metadata ->> 'description', '') || ' ' ||
    coalesce(metadata ->> 'category', ''))) STORED;

CREATE INDEX objects_search ON objects USING gin (search);
-- Structured indexer queries: custom @> '{"color":"red"}'.
CREATE INDEX objects_custom ON objects USING gin (custom jsonb_path_ops);
CREATE INDEX objects_org_modified ON objects (organization_id, updated_at DESC, id DESC);

-- The public list (GET /public/objects). Every index is partial on is_public, so private
-- objects cost nothing here; each matches one filter + the sort + id (the keyset).
CREATE INDEX objects_public_created ON objects (created_at DESC, id DESC) WHERE is_public;
CREATE INDEX objects_public_modified ON objects (updated_at DESC, id DESC) WHERE is_public;
CREATE INDEX objects_public_owner ON objects (owner, created_at DESC, id DESC) WHERE is_public;
CREATE INDEX objects_public_geo ON objects (geo_hash text_pattern_ops, created_at DESC, id DESC)
  WHERE is_public;
CREATE INDEX objects_public_collection ON objects (collection_id, created_at DESC, id DESC)
  WHERE is_public AND collection_id IS NOT NULL;
CREATE INDEX objects_public_name ON objects (name_lower text_pattern_ops) WHERE is_public;

CREATE INDEX templates_search ON templates USING gin (to_tsvector('simple'::regconfig, name));

-- Uploaded files (POST /storage/upload). The bytes live in a BlobStore under their SHA-256;
-- two uploads of the same bytes share one blob but are two records.
CREATE TABLE files (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  wallet_id       text NOT NULL REFERENCES wallets (id),
  name            text NOT NULL,
  type            text NOT NULL,
  size_bytes      bigint NOT NULL CHECK (size_bytes >= 0),
  hash            text NOT NULL,
  is_public       boolean NOT NULL DEFAULT false,
  created_at      timestamptz(3) NOT NULL
);
CREATE INDEX files_org_created ON files (organization_id, created_at DESC, id DESC);
