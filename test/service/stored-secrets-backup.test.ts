import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { keyId } from '../../src/lib/sealed-secret.js';
import { databaseUrl } from '../helpers/db.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { storedAt, type Stored } from '../helpers/stored-secrets.js';
import { call, createWebhook, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * A backup carries stored secrets sealed under SECRETS_KEY as they are, and a restore checks
 * that the keys it is given open them: without them it says so, naming SECRETS_KEY, and the
 * service would not start on the copy (docs/self-hosting.md, "Backup and restore").
 */
const exec = promisify(execFile);
const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('hex');
const idA = keyId(Buffer.from(A, 'hex'));

let svc: TestService;
let work: string;
let archive: string;
let source: Stored[];
const started: TestService[] = [];

/** `npm run ons -- ARGS` as a process of its own; answers its exit code and output. */
async function ons(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await exec('node_modules/.bin/tsx', ['src/cli/ons.ts', ...args], {
      env: {
        ...process.env,
        LOG_LEVEL: 'error',
        SECRETS_KEY: '',
        SECRETS_KEY_PREVIOUS: '',
        ...env,
      },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A new, empty database on the test server (dropped with the run's others). */
async function emptyDatabase(): Promise<string> {
  const name = `${inject('pgRunId')}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(name);
}

/** Restores the archive into a new empty database with `env`; answers the outcome and URL. */
async function restoreWith(env: Record<string, string>) {
  const url = await emptyDatabase();
  const dataDir = await mkdtemp(path.join(work, 'restore-'));
  const out = await ons(['restore', archive], { DATABASE_URL: url, DATA_DIR: dataDir, ...env });
  return { ...out, url };
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ons-secrets-backup-'));
  svc = await startTestService({
    env: { SECRETS_KEY: A, STORAGE_DIR: path.join(work, 'files'), WEBHOOK_ALLOW_LOOPBACK: 'true' },
  });
  const { signer, templateId } = await signerWithTemplate(svc);
  const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
    { template_id: templateId },
  ]);
  await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
  source = await storedAt(svc.config.databaseUrl!);
  archive = path.join(work, 'sealed.tgz');
  const made = await ons(['backup', archive, '--method', 'builtin'], {
    DATABASE_URL: svc.config.databaseUrl!,
    STORAGE_DIR: path.join(work, 'files'),
    DATA_DIR: path.join(work, 'source'),
  });
  expect(made.code, made.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  for (const s of started) await s.stop();
  await svc?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a restore of sealed secrets', () => {
  it('without the key they are sealed under, says so, naming SECRETS_KEY', async () => {
    const unset = await restoreWith({});
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('was restored, but the service will not start on it');
    expect(unset.stderr).toContain('SECRETS_KEY is not set');
    expect(unset.stderr).toContain(idA);
    // The copy holds the secrets as they were backed up, sealed: a start with the key works.
    expect(await storedAt(unset.url)).toEqual(source);
    const svc2 = await startTestService({ databaseUrl: unset.url, env: { SECRETS_KEY: A } });
    started.push(svc2);

    const wrong = await restoreWith({ SECRETS_KEY: B });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`neither SECRETS_KEY (key id ${keyId(Buffer.from(B, 'hex'))})`);
    expect(wrong.stderr).toContain(idA);
  }, 120_000);

  it('with the key, as SECRETS_KEY or in SECRETS_KEY_PREVIOUS, succeeds and keeps them as they are', async () => {
    const envs: Record<string, string>[] = [
      { SECRETS_KEY: A },
      { SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A },
    ];
    for (const env of envs) {
      const restored = await restoreWith(env);
      expect(restored.code, restored.stderr).toBe(0);
      expect(await storedAt(restored.url)).toEqual(source);
    }
    expect(source.length).toBeGreaterThanOrEqual(6);
    for (const v of source) expect(v.value.startsWith(`sealed:v1:${idA}:`)).toBe(true);
  }, 120_000);
});
