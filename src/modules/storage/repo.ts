import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { asDate, asNumber } from '../../db/values.js';

/** A row of `files`. */
export type FileRow = {
  id: string;
  organization_id: string;
  wallet_id: string;
  name: string;
  type: string;
  size_bytes: number;
  hash: string;
  is_public: boolean;
  created_at: Date;
};

export async function insertFile(exec: Executor, f: FileRow): Promise<void> {
  await exec.execute(sql`INSERT INTO files
    (id, organization_id, wallet_id, name, type, size_bytes, hash, is_public, created_at)
    VALUES (${f.id}, ${f.organization_id}, ${f.wallet_id}, ${f.name}, ${f.type}, ${f.size_bytes},
      ${f.hash}, ${f.is_public}, ${f.created_at})`);
}

/** A file by id; the service decides who may read it (public files are for anyone). */
export async function findFile(exec: Executor, id: string): Promise<FileRow | null> {
  const { rows } = await exec.execute<FileRow>(sql`SELECT * FROM files WHERE id = ${id}`);
  const row = rows[0];
  return row
    ? { ...row, size_bytes: asNumber(row.size_bytes), created_at: asDate(row.created_at) }
    : null;
}

/** The bytes the organization's files take (0 before its first upload). */
export async function usedBytes(exec: Executor, orgId: string): Promise<number> {
  const { rows } = await exec.execute<{ bytes: number | string }>(
    sql`SELECT bytes FROM storage_usage WHERE organization_id = ${orgId}`,
  );
  return rows[0] ? asNumber(rows[0].bytes) : 0;
}

/**
 * Adds `bytes` to the organization's usage unless that would pass `quota`; false then (and
 * nothing changes). One row per organization, so concurrent uploads are counted one by one.
 */
export async function addUsage(
  exec: Executor,
  orgId: string,
  bytes: number,
  quota: number,
): Promise<boolean> {
  const { rows } = await exec.execute(sql`
    INSERT INTO storage_usage AS u (organization_id, bytes)
    SELECT ${orgId}, ${bytes}::bigint WHERE ${bytes}::bigint <= ${quota}::bigint
    ON CONFLICT (organization_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes
      WHERE u.bytes + EXCLUDED.bytes <= ${quota}::bigint
    RETURNING u.bytes`);
  return rows.length === 1;
}
