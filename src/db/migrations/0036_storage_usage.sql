-- What each organization's uploads take (docs/objects.md, "Files"): the sum of its files'
-- sizes, kept beside them so an upload checks STORAGE_QUOTA_BYTES with one row, not a sum.
CREATE TABLE storage_usage (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  bytes           bigint NOT NULL CHECK (bytes >= 0)
);
INSERT INTO storage_usage (organization_id, bytes)
SELECT organization_id, sum(size_bytes) FROM files GROUP BY organization_id;
