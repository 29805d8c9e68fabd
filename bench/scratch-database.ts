import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbedded, type EmbeddedServer } from '../src/db/embedded.js';

/**
 * A fresh database for one benchmark: on BENCH_DATABASE_URL's (else DATABASE_URL's) server when
 * set, else on an embedded PostgreSQL in a temporary directory; `drop()` removes both.
 */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL;
  let embedded: EmbeddedServer | null = null;
  let dir: string | null = null;
  if (!base) {
    dir = await mkdtemp(path.join(tmpdir(), 'ons-bench-'));
    embedded = await startEmbedded(dir);
  }
  const adminUrl = base ?? embedded!.url;
  const name = `ons_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
      if (embedded) await embedded.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
