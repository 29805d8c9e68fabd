import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { withPool } from '../../src/db/backup-database.js';
import { freshDatabaseUrl } from '../helpers/db.js';

// `ons restore` runs its statements on a pool of its own and then stops the embedded server
// it started. pg-pool's end() answers before its clients have closed, so the server may cut a
// connection the pool still holds; the command must not die of it (a run of the integration
// tier on the machine's PostgreSQL once saw `ons restore` exit on an unheard pool 'error'
// event, code 57P01).
describe('backup: the pool of a backup or restore step', () => {
  it('survives its idle connection being cut by the server', async () => {
    const url = await freshDatabaseUrl();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const answer = await withPool(url, async (pool) => {
        const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // The server ends the pool's connection while it sits idle in the pool, as a server
        // shutting down does.
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        await new Promise((r) => setTimeout(r, 300));
        return 'done';
      });
      expect(answer).toBe('done');
    } finally {
      await admin.end();
    }
  });
});
