import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';

/** Whether the object exists and is public (its template is). */
export async function publicObjectExists(exec: Executor, id: string): Promise<boolean> {
  const { rows } = await exec.execute<{ one: number }>(
    sql`SELECT 1 AS one FROM objects WHERE id = ${id} AND is_public`,
  );
  return rows.length > 0;
}

export async function objectExists(exec: Executor, orgId: string, id: string): Promise<boolean> {
  const { rows } = await exec.execute<{ one: number }>(
    sql`SELECT 1 AS one FROM objects WHERE organization_id = ${orgId} AND id = ${id}`,
  );
  return rows.length > 0;
}
