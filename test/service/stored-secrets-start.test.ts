import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyId } from '../../src/lib/sealed-secret.js';
import { builtEntry, freePort, jsonLinesOf } from '../helpers/processes.js';
import { startTestService } from '../helpers/service.js';

/**
 * `npm start` with WORKERS on a database whose stored secrets are sealed, without SECRETS_KEY:
 * the primary exits 1 with one message naming the setting and the key id, before it forks a
 * process (docs/self-hosting.md, "Secrets at rest").
 */
const A = randomBytes(32).toString('hex');
const idA = keyId(Buffer.from(A, 'hex'));

let url: string;
let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ons-secrets-start-'));
  const svc = await startTestService({ env: { SECRETS_KEY: A } });
  url = svc.config.databaseUrl!;
  await svc.stop();
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** dist/main.js with `env` on the sealed database, without SECRETS_KEY: how it ended. */
async function startWithoutKey(env: Record<string, string>) {
  const child = spawn(process.execPath, builtEntry('main.js'), {
    env: {
      ...process.env,
      DATABASE_URL: url,
      DATA_DIR: work,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SECRETS_KEY: '',
      SECRETS_KEY_PREVIOUS: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines = jsonLinesOf(child.stdout);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  // Killed by its pid if it has not exited in 20 s (a primary that forks again and again).
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(timer);
  return { code, stderr, lines };
}

describe('a start without SECRETS_KEY on sealed secrets', () => {
  // Alone, the process exits as its start-up pass refuses (test/service/stored-secrets.test.ts).
  it('exits 1 as the primary of WORKERS=2, naming SECRETS_KEY and the key id once, forking nothing', async () => {
    const { code, stderr, lines } = await startWithoutKey({
      WORKERS: '2',
      RATE_LIMIT_ENABLED: 'false',
    });
    expect(code, stderr).toBe(1);
    expect(stderr.match(/SECRETS_KEY is not set/g), stderr).toHaveLength(1);
    expect(stderr).toContain(idA);
    expect(lines.filter((l) => l.msg === 'HTTP process died; starting another')).toEqual([]);
    expect(lines.filter((l) => l.msg === 'HTTP processes started')).toEqual([]);
  });
});
