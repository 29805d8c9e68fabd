import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';

/** Resolves when the database answers a trivial query; rejects when it does not. */
export async function pingDatabase(exec: Executor): Promise<void> {
  await exec.execute(sql`SELECT 1`);
}
