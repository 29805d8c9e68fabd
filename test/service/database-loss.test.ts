import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedServer } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createDatabase } from '../../src/db/pool.js';
import {
  createSigner,
  createTemplate,
  fund,
  signEoa,
  ACTION_FEE,
  type EoaSigner,
} from '../helpers/ebus.js';
import { startTestService, type TestService } from '../helpers/service.js';

// The test's own embedded server (not the suite's shared one), since it is killed.
let dir: string;
let embedded: EmbeddedServer;
let svc: TestService;
const restarts: number[] = [];
const RESTART_DELAY_MS = 5000;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-loss-'));
  embedded = await startEmbedded(dir, () => undefined, {
    watchMs: 100,
    // Long enough for the test to see the service without its database.
    delayMs: RESTART_DELAY_MS,
    onRestarted: (pid) => restarts.push(pid),
  });
  const admin = createDatabase(embedded.url, 2);
  await migrate(admin.pool);
  await admin.close();
  svc = await startTestService({ databaseUrl: embedded.url });
}, 120_000);
afterAll(async () => {
  await svc?.stop();
  await embedded?.stop();
  await rm(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const mint = async (signer: EoaSigner, templateId: string, nonce: number) =>
  svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: await signEoa(svc, signer, {
      name: 'mint',
      params: { template_id: templateId },
      nonce,
    }),
  });

const metrics = async () => (await svc.app.inject({ method: 'GET', url: '/metrics' })).body;

/** `ons_revocation_listener_up` and `ons_revocation_listens_total`, as `"<up> <listens>"`. */
function listenerSeries(text: string): string {
  const value = (name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return `${value('ons_revocation_listener_up')} ${value('ons_revocation_listens_total')}`;
}

describe('losing the embedded database', () => {
  it('answers 503 code 14 with Retry-After and /readyz 503 while it is down, restarts it and serves again', async () => {
    const owner = await createSigner(svc);
    await fund(svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(svc, owner.orgId);
    // The event bus's statements are prepared on the pool's connections before the loss.
    expect((await mint(owner, templateId, 0)).statusCode).toBe(200);
    expect((await mint(owner, templateId, 1)).statusCode).toBe(200);

    const pid = embedded.pid()!;
    process.kill(pid, 'SIGKILL');
    await eventually(() => !alive(pid), 10_000);

    const read = await svc.app.inject({
      method: 'GET',
      url: '/ebus/nonce',
      headers: owner.headers,
    });
    expect([read.statusCode, read.json().code]).toEqual([503, 14]);
    expect(read.headers['retry-after']).toBe('5');
    expect(read.json().message).not.toMatch(/ECONNREFUSED|postgres|127\.0\.0\.1/);
    const write = await mint(owner, templateId, 2);
    expect([write.statusCode, write.json().code]).toEqual([503, 14]);
    expect(write.headers['retry-after']).toBe('5');
    expect((await svc.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    expect((await svc.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    // The revocation listener lost its connection too: it says so (and forgets what it
    // remembered of credentials: docs/auth.md, "Revocation on every server").
    await eventually(async () => listenerSeries(await metrics()) === '0 1', 5_000);
    // All of it was seen while the server was down, before its restart.
    expect(restarts).toEqual([]);

    await eventually(
      async () => (await svc.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200,
      60_000,
    );
    expect(restarts).toHaveLength(1);
    expect(embedded.pid()).not.toBe(pid);
    // And listens again, on a new connection.
    await eventually(async () => listenerSeries(await metrics()) === '1 2', 15_000);

    // The action refused with 503 applies when sent again: committer and statements recovered.
    const again = await mint(owner, templateId, 2);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().action.nonce).toBe(2);
    const nonce = await svc.app.inject({
      method: 'GET',
      url: '/ebus/nonce',
      headers: owner.headers,
    });
    expect(nonce.json().nonce).toBe(3);
    // No request was answered 500 on the way.
    expect(svc.logs.filter((l) => (l.res as { statusCode?: number })?.statusCode === 500)).toEqual(
      [],
    );
  }, 120_000);
});
