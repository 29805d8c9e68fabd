import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyNetwork, type Source } from '../../sdk/src/verify/index.js';
import { httpSource } from '../../sdk/src/verify/source.js';
import { findTool } from '../../src/db/pg-tools.js';
import { chainProblems } from '../helpers/batches.js';
import { createSigner } from '../helpers/ebus.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/processes.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createWebhook, execute, headersNow, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Issue 31 item 7: `ons backup FILE` / `ons restore FILE`. A service with two organizations,
 * objects, sealed and proven batches, webhooks with pending deliveries and a stored file is
 * backed up through the command; the archive is restored into a fresh data directory (its own
 * embedded PostgreSQL); a service started there answers the same records, serves the same
 * file, and the SDK's offline verifier accepts the same batch chain. Done with the built-in
 * dump, and with pg_dump when this machine has one that can read the test's server (else the
 * command must refuse `--method pg_dump`, naming the versions).
 */
const exec = promisify(execFile);
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

let svc: TestService;
let work: string;
let filesDir: string;
const started: ServiceProcess[] = [];
/** Each member's headers, issued before the backup so the restored service knows them. */
const members: { orgId: string; headers: Record<string, string> }[] = [];
let fileId: string;
let webhookId: string;

function form(name: string, filename: string, data: Buffer) {
  const boundary = '----onsbackup' + Math.random().toString(16).slice(2);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), data, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

/** `npm run ons -- ARGS` as a process of its own; answers its exit code and output. */
async function ons(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await exec('node_modules/.bin/tsx', ['src/cli/ons.ts', ...args], {
      env: { ...process.env, LOG_LEVEL: 'error', DATABASE_URL: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const sourceEnv = () => ({
  DATABASE_URL: svc.config.databaseUrl!,
  STORAGE_DIR: filesDir,
  DATA_DIR: path.join(work, 'source'),
});

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'ons-backup-'));
  filesDir = path.join(work, 'files');
  svc = await startTestService({
    env: { STORAGE_DIR: filesDir, BATCH_MAX_ACTIONS: '3', WEBHOOK_ALLOW_LOOPBACK: 'true' },
  });
  for (let org = 0; org < 2; org++) {
    const { signer, templateId } = await signerWithTemplate(svc);
    const other = await createSigner(svc, { orgId: signer.orgId });
    const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
      { template_id: templateId, actions: ['mint', 'transfer'] },
    ]);
    webhookId = hook.id;
    for (let i = 0; i < 4; i++) {
      const minted = await execute(svc, signer, 'mint', { template_id: templateId }, 2 * i);
      await execute(
        svc,
        signer,
        'transfer',
        { object_id: minted.object.id, to: other.address },
        2 * i + 1,
      );
    }
    members.push({ orgId: signer.orgId, headers: await headersNow(svc, signer) });
  }
  const f = form('file', 'dot.png', PNG);
  const up = await svc.app.inject({
    method: 'POST',
    url: '/storage/upload',
    headers: { ...members[0]!.headers, 'content-type': f.type },
    payload: f.payload,
  });
  expect(up.statusCode, up.body).toBe(200);
  fileId = up.json<{ id: string }>().id;
  // Every action into a sealed, proven batch (the last one sealed by age).
  svc.clock.advance(60_000);
  for (let i = 0; i < 40 && (await svc.container.batches.sealer.tick()); i++);
  // 16 actions in batches of 3: six proven batches, and the next one open and empty.
  const { rows } = await svc.container.db.execute<{ proven: number; waiting: number }>(sql`
    SELECT (SELECT count(*)::int FROM batches WHERE status = 'proven') AS proven,
      (SELECT count(*)::int FROM action_logs a LEFT JOIN batches b ON b.id = a.batch_id
        WHERE b.status IS DISTINCT FROM 'proven') AS waiting`);
  expect(rows[0]).toEqual({ proven: 6, waiting: 0 });
  expect(await chainProblems(svc.container.db)).toEqual([]);
  // The source holds still from here: its delivery loop would otherwise go on retrying the
  // unreachable webhook, so what a backup holds and what the source answers later could
  // differ by an attempt. (Its sealer has nothing left to seal.)
  await svc.container.webhookWorker.stop();
}, 120_000);

afterAll(async () => {
  for (const s of started) await s.stop();
  await svc?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

/** What a client sees of the service: the same answers are expected after a restore. */
async function records(get: (url: string, headers?: Record<string, string>) => Promise<unknown>) {
  const out: Record<string, unknown> = {};
  for (const m of members) {
    out[`${m.orgId} org`] = await get(`/organizations/${m.orgId}`, m.headers);
    out[`${m.orgId} balance`] = await get(`/organizations/${m.orgId}/balance`, m.headers);
    out[`${m.orgId} objects`] = await get('/objects?limit=100', m.headers);
    out[`${m.orgId} templates`] = await get('/templates', m.headers);
    out[`${m.orgId} webhooks`] = await get('/webhooks', m.headers);
  }
  out.events = await get(`/webhooks/${webhookId}/events`, members[1]!.headers);
  out.batches = await get('/batches?limit=100');
  return out;
}

/** The test service (driven with inject) as the verifier's source. */
const injectSource: Source = {
  async bytes(url) {
    const res = await svc.app.inject({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
    });
    if (res.statusCode === 404) return null;
    if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode}`);
    return new Uint8Array(res.rawPayload);
  },
  async json<T>(url: string) {
    const b = await this.bytes(url);
    return b === null ? null : (JSON.parse(Buffer.from(b).toString('utf8')) as T);
  },
};

async function restoredService(file: string, name: string) {
  const dataDir = path.join(work, name);
  const restored = await ons(['restore', file], { DATA_DIR: dataDir });
  expect(restored.code, restored.stderr).toBe(0);
  const result = JSON.parse(restored.stdout) as { rows: number; files: number; migrated: [] };
  expect(result.files).toBe(1);
  expect(result.migrated).toEqual([]);
  const service = await startServiceProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    NETWORK_ID: svc.config.networkId,
    // Tokens name the service's public URL as their issuer; the same service, the same URL.
    PUBLIC_URL: svc.config.publicUrl,
    RATE_LIMIT_ENABLED: 'false',
    PUBLIC_LIST_CACHE_MS: '0',
    WEBHOOK_DELIVERY: 'false',
    BATCH_SEALER: 'false',
  });
  started.push(service);
  return service;
}

async function expectSameService(restored: ServiceProcess) {
  // The fee (and so a balance's `actions_left`) follows the recent batch size, and a quote is
  // served for 5 s after it is computed: the source's may predate the fixture's last batches
  // (docs/ebus.md, "Fees"), while the restored service computes its first one now.
  svc.container.ebus.fees.invalidate();
  const before = await records(async (url, headers = {}) => {
    const res = await svc.app.inject({ method: 'GET', url, headers });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    return res.json();
  });
  const after = await records(async (url, headers = {}) => {
    const res = await fetch(`${restored.url}${url}`, { headers });
    expect(res.status, url).toBe(200);
    return res.json();
  });
  // Key by key, so that a difference names what differs.
  for (const key of Object.keys(before)) expect(after[key], key).toEqual(before[key]);
  expect(Object.keys(after)).toEqual(Object.keys(before));
  // Six proven batches and the open one after them.
  expect((before.batches as { batches: unknown[] }).batches).toHaveLength(7);

  const file = await fetch(`${restored.url}/storage/files/${fileId}`, {
    headers: members[0]!.headers,
  });
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer())).toEqual(PNG);

  const original = await verifyNetwork(injectSource);
  const copy = await verifyNetwork(httpSource(restored.url));
  expect(original.ok, JSON.stringify(original.verdicts.filter((v) => !v.ok))).toBe(true);
  expect(copy.ok, JSON.stringify(copy.verdicts.filter((v) => !v.ok))).toBe(true);
  expect(copy.verdicts).toEqual(original.verdicts);
  expect(copy.verdicts.filter((v) => /^batch /.test(v.item))).toHaveLength(6);
}

describe('ons backup / restore', () => {
  it('restores the built-in dump into a fresh data directory: same records, same batch chain', async () => {
    const file = path.join(work, 'builtin.tgz');
    const backup = await ons(['backup', file, '--method', 'builtin'], sourceEnv());
    expect(backup.code, backup.stderr).toBe(0);
    const made = JSON.parse(backup.stdout) as { rows: number; tables: number };
    expect(made).toMatchObject({ method: 'builtin', files: 1 });
    expect(await exec('stat', ['-c', '%a', file]).then((r) => r.stdout.trim())).toBe('600');
    await expectSameService(await restoredService(file, 'restored-builtin'));
    // The restored service's own embedded server, found while it runs, backs up the same rows.
    const again = await ons(['backup', path.join(work, 'again.tgz')], {
      DATA_DIR: path.join(work, 'restored-builtin'),
    });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: made.rows, tables: made.tables });
  }, 180_000);

  it('writes the archive into a file only its owner can read, from the first byte', async () => {
    // A `tar` first on PATH that notes the mode of the file it is about to write, then runs
    // the real one: the archive holds every secret, so it must never be readable by others.
    const bin = path.join(work, 'spy-bin');
    await mkdir(bin, { recursive: true });
    const seen = path.join(work, 'tar-saw-mode');
    const realTar = (await exec('sh', ['-c', 'command -v tar'])).stdout.trim();
    await writeFile(
      path.join(bin, 'tar'),
      `#!/bin/sh\nif [ "$1" = "-czf" ]; then stat -c %a "$2" > ${seen}; fi\nexec ${realTar} "$@"\n`,
      { mode: 0o755 },
    );
    const file = path.join(work, 'modes.tgz');
    const env = { ...sourceEnv(), PATH: `${bin}:${process.env.PATH}` };
    const backup = await exec(
      'sh',
      [
        '-c',
        'umask 022 && "$@"',
        'sh',
        'node_modules/.bin/tsx',
        'src/cli/ons.ts',
        'backup',
        file,
        '--method',
        'builtin',
      ],
      {
        env: { ...process.env, LOG_LEVEL: 'error', ...env },
      },
    );
    expect(backup.stdout).toContain('"method":"builtin"');
    expect((await readFile(seen, 'utf8')).trim()).toBe('600');
    expect((await exec('stat', ['-c', '%a', file])).stdout.trim()).toBe('600');
  }, 120_000);

  it('uses pg_dump when one can read the server, and refuses --method pg_dump otherwise', async () => {
    const { rows } = await svc.container.db.execute<{ n: string }>(
      sql`SELECT current_setting('server_version_num') AS n`,
    );
    const major = Math.floor(Number(rows[0]!.n) / 10_000);
    const { tool } = await findTool('pg_dump', major, null);
    const file = path.join(work, 'pg_dump.tgz');
    const backup = await ons(['backup', file, '--method', 'pg_dump'], sourceEnv());
    if (!tool) {
      expect(backup.code).toBe(1);
      expect(backup.stderr).toContain(`no pg_dump can read this PostgreSQL ${major} server`);
      expect(backup.stderr).toContain('PG_BIN_DIR');
      // `auto` falls back to the built-in dump.
      const auto = await ons(['backup', file], sourceEnv());
      expect(auto.code, auto.stderr).toBe(0);
      expect(JSON.parse(auto.stdout)).toMatchObject({ method: 'builtin' });
      return;
    }
    expect(backup.code, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ method: 'pg_dump', files: 1 });
    await expectSameService(await restoredService(file, 'restored-pg_dump'));
  }, 180_000);

  it('refuses a database in use, an archive that is not one, and bad arguments', async () => {
    const file = path.join(work, 'refusals.tgz');
    expect((await ons(['backup', file, '--method', 'builtin'], sourceEnv())).code).toBe(0);

    const intoUsed = await ons(['restore', file], sourceEnv());
    expect(intoUsed.code).toBe(1);
    expect(intoUsed.stderr).toContain('already holds');

    const junk = path.join(work, 'junk.tgz');
    await writeFile(junk, 'not a tar file');
    const notArchive = await ons(['restore', junk], { DATA_DIR: path.join(work, 'junk') });
    expect(notArchive.code).toBe(1);
    expect(notArchive.stderr).toContain('is not a backup archive');

    const missing = await ons(['restore', path.join(work, 'nothing.tgz')], {
      DATA_DIR: path.join(work, 'junk'),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');

    expect((await ons(['backup'], sourceEnv())).code).toBe(2);
    expect((await ons(['backup', file, '--method', 'copy'], sourceEnv())).code).toBe(2);
    expect((await ons(['restore'], sourceEnv())).code).toBe(2);

    // With the S3 store, the files are the bucket's to back up: noted, not copied.
    const s3 = await ons(['backup', path.join(work, 's3.tgz'), '--method', 'builtin'], {
      ...sourceEnv(),
      S3_ENDPOINT: 'http://127.0.0.1:9',
      S3_BUCKET: 'ons-files',
    });
    expect(s3.code, s3.stderr).toBe(0);
    expect(JSON.parse(s3.stdout)).toMatchObject({
      files: 0,
      note: expect.stringContaining('S3 bucket "ons-files"') as unknown,
    });

    // Nothing of the refusals reached the source.
    expect(await chainProblems(svc.container.db)).toEqual([]);
    expect((await readFile(file)).length).toBeGreaterThan(0);
  }, 120_000);
});
