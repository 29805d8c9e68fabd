-- Sessions continued by an organization switch keep the first session of their chain (its
-- family): a reused refresh token ends the whole family (docs/auth.md, "Sessions"). NULL: the
-- session is the first of its own family. Existing switched sessions stay NULL (each its own).
ALTER TABLE sessions ADD COLUMN family_id text;
CREATE INDEX sessions_family ON sessions ((coalesce(family_id, id))) WHERE ended_at IS NULL;
