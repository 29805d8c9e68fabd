import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@ons/sdk';
import type { Db } from '../../src/db/pool.js';
import { sealStoredSecrets } from '../../src/db/sealed-columns.js';
import { keyId, SecretSealer } from '../../src/lib/sealed-secret.js';
import { newSigningKey, webhookSecrets } from '../../src/modules/webhooks/keys.js';
import { SECRET_TABLES } from '../../src/stored-secrets.js';
import { WebhookDeliveryWorker } from '../../src/workers/webhook-delivery.js';
import { chainProblems } from '../helpers/batches.js';
import { createTemplate } from '../helpers/ebus.js';
import { bytes, parseCheckpoint, verifyWithVkey } from '../helpers/log.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { COLUMNS, stored, storedAt, type Stored } from '../helpers/stored-secrets.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import {
  call,
  createWebhook,
  execute,
  expectRotationSignatures,
  headersNow,
  signerWithTemplate,
} from '../helpers/webhooks.js';

/**
 * Stored secrets sealed under SECRETS_KEY (docs/self-hosting.md, "Secrets at rest"): every
 * column that keeps one holds only sealed values, each secret still does its work, clear
 * values are sealed at start, sealed values without their key stop the start (and nothing
 * is replaced), and a key rotation seals them again under the new key.
 */
const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('base64url');
const idA = keyId(Buffer.from(A, 'hex'));
const idB = keyId(Buffer.from(B, 'base64url'));

let ca: TestCa;
const receivers: Receiver[] = [];
const services: TestService[] = [];
beforeAll(async () => {
  ca = await makeTestCa();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  for (const s of services.splice(0)) await s.stop();
});

async function start(env: Record<string, string>, databaseUrl?: string): Promise<TestService> {
  const svc = await startTestService({
    env: {
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: ca.caFile,
      BATCH_MAX_ACTIONS: '2',
      ...env,
    },
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  services.push(svc);
  return svc;
}

async function stop(svc: TestService): Promise<void> {
  services.splice(services.indexOf(svc), 1);
  await svc.stop();
}

/** Why a service on `databaseUrl` with `env` does not start (it must not). */
async function refusal(env: Record<string, string>, databaseUrl: string): Promise<string> {
  try {
    await stop(await start(env, databaseUrl));
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the service started');
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver(ca);
  receivers.push(r);
  return r;
}

/** Each value sealed under `id`, every column present; answers them opened with `key`. */
async function expectAllSealed(db: Db, id: string, key: Buffer): Promise<Stored[]> {
  const values = await stored(db);
  expect(new Set(values.map((v) => v.column))).toEqual(new Set(COLUMNS));
  for (const v of values) {
    expect(v.value.startsWith(`sealed:v1:${id}:`), `${v.column} ${v.row}`).toBe(true);
  }
  const { rows } = await db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM signing_keys WHERE jsonb_typeof(private_jwk) <> 'string'`,
  );
  expect(rows[0]!.n).toBe(0);
  const sealer = new SecretSealer({ key, previous: [] });
  return values.map((v) => ({
    ...v,
    value: v.column.startsWith('webhooks.')
      ? sealer.openBytes(Buffer.from(v.value, 'latin1'), v).toString('hex')
      : sealer.openText(v.value, v),
  }));
}

/** Clear values as they are read (bytea as hex), for comparing with opened ones. */
const clearOf = (values: Stored[]) =>
  values.map((v) => ({
    ...v,
    value: v.column.startsWith('webhooks.')
      ? Buffer.from(v.value, 'latin1').toString('hex')
      : v.value,
  }));

const byPlace = (values: Stored[]) =>
  [...values].sort((x, y) => `${x.column} ${x.row}`.localeCompare(`${y.column} ${y.row}`));

/** Seals and proves what is waiting; answers the proven batches' proofs. */
async function proveAll(svc: TestService) {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
  const res = await svc.app.inject({ method: 'GET', url: '/batches?status=proven&limit=100' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{
    batches: {
      id: string;
      sequence: number;
      commitment: string;
      proof: { vkey: string; value: string };
    }[];
  }>().batches;
}

/** Each batch's content (`GET /batches/{id}/content`), as served, in batch order. */
async function batchContents(
  svc: TestService,
  batches: { id: string; sequence: number }[],
): Promise<string[]> {
  const out: string[] = [];
  for (const b of [...batches].sort((x, y) => x.sequence - y.sequence)) {
    const res = await svc.app.inject({ method: 'GET', url: `/batches/${b.id}/content` });
    expect(res.statusCode, res.body).toBe(200);
    out.push(res.body);
  }
  return out;
}

/**
 * The batches' attestations verify under the service's batch key; with `chain`, the chain is
 * sound as chainProblems recomputes it (from public actions only).
 */
async function expectBatchesVerify(svc: TestService, chain = true) {
  const proven = await proveAll(svc);
  expect(proven.length).toBeGreaterThan(0);
  for (const b of proven) {
    expect(b.proof.vkey).toBe(svc.container.batches.publicKey);
    const key = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), bytes(b.proof.vkey)]),
      format: 'der',
      type: 'spki',
    });
    expect(verify(null, bytes(b.commitment), key, bytes(b.proof.value))).toBe(true);
  }
  if (chain) expect(await chainProblems(svc.container.db)).toEqual([]);
}

/** The log's latest checkpoint verifies under the service's log key. */
async function expectCheckpointVerifies(svc: TestService) {
  const res = await svc.app.inject({ method: 'GET', url: '/log/checkpoint' });
  expect(res.statusCode, res.body).toBe(200);
  const cp = parseCheckpoint(res.body);
  expect(cp.size).toBeGreaterThan(0);
  const vkey = svc.container.log.network().verifier_key;
  expect(verifyWithVkey(cp.body, cp.signatures[0]!, vkey)).toBe(true);
}

describe('a service started with SECRETS_KEY', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await start({ SECRETS_KEY: A });
  });

  it('keeps every secret sealed under it, and each still does its work', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    // Access tokens sign and verify: `call` sends one the service issued.
    const rotated = await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    // Deliveries claimed by the worker are signed by both keys, then by the new one alone.
    await expectRotationSignatures(
      svc,
      r,
      { signer, templateId },
      { old: hook.signing_key, rotated: rotated.signing_key },
      async (n) => {
        await svc.container.webhookWorker.runOnce();
        expect(r.received).toHaveLength(n);
      },
    );
    await expectBatchesVerify(svc);
    await expectCheckpointVerifies(svc);

    const opened = await expectAllSealed(svc.container.db, idA, Buffer.from(A, 'hex'));
    const at = (column: string) => opened.filter((v) => v.column === column);
    expect(at('webhooks.signing_key')).toEqual([
      expect.objectContaining({ row: hook.id, value: rotated.signing_key }),
    ]);
    expect(at('webhooks.previous_signing_key')).toEqual([
      expect.objectContaining({ row: hook.id, value: hook.signing_key }),
    ]);
    expect(JSON.parse(at('signing_keys.private_jwk')[0]!.value)).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      d: expect.any(String),
    });
    expect(at('batch_keys.private_key')[0]!.value).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(at('batch_salt_keys.secret')[0]!.value).toMatch(/^[0-9a-f]{64}$/);
    expect(at('log_keys.seed')[0]!.value).toMatch(/^[0-9a-f]{64}$/);
    // No log line holds a key.
    const logs = JSON.stringify(svc.logs);
    for (const v of opened) expect(logs).not.toContain(v.value);
  });

  it('signs handed deliveries (the fast lane) with the key POST /webhooks answered', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const worker = new WebhookDeliveryWorker(svc.container.webhooks.runner, svc.container.logger, {
      handoff: svc.container.webhooks.handoff,
      idlePollMs: 3_600_000,
      flushMs: 1,
    });
    worker.start();
    try {
      await new Promise((res) => setTimeout(res, 100));
      for (let nonce = 0; nonce < 3; nonce++) {
        await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
      }
      const until = Date.now() + 10_000;
      while (r.received.length < 3 && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 20));
      }
    } finally {
      await worker.stop();
    }
    expect(r.received).toHaveLength(3);
    // Stored sealed from its creation on (no rotation here).
    const key = (await stored(svc.container.db)).find(
      (v) => v.column === 'webhooks.signing_key' && v.row === hook.id,
    )!;
    expect(key.value.startsWith(`sealed:v1:${idA}:`)).toBe(true);
    const sealer = new SecretSealer({ key: Buffer.from(A, 'hex'), previous: [] });
    expect(sealer.openBytes(Buffer.from(key.value, 'latin1'), key).toString('hex')).toBe(
      hook.signing_key,
    );
    for (const got of r.received) {
      expect(
        await verifyWebhook(got.headers, got.body, hook.signing_key, { now: svc.clock.now() }),
      ).toMatchObject({ ok: true });
    }
  });
});

describe('a database whose secrets are clear', () => {
  let url: string;
  let clear: Stored[];
  let before: { batchKey: string; logKey: string; webhook: { id: string; key: string } };
  let headers: Record<string, string>;
  let owner: Awaited<ReturnType<typeof signerWithTemplate>>;
  let contents: string[];

  beforeAll(async () => {
    const svc = await start({});
    url = svc.config.databaseUrl!;
    owner = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, owner.signer, r.url, [{ template_id: owner.templateId }]);
    const rotated = await call(svc, owner.signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    await execute(svc, owner.signer, 'mint', { template_id: owner.templateId }, 0);
    // A private action: its batch's content holds a commitment salted by the salt key.
    const privateTemplate = await createTemplate(svc, owner.signer.orgId, { isPublic: false });
    await execute(svc, owner.signer, 'mint', { template_id: privateTemplate }, 1);
    contents = await batchContents(svc, await proveAll(svc));
    expect(contents.some((c) => c.includes('"private":true'))).toBe(true);
    headers = await headersNow(svc, owner.signer);
    before = {
      batchKey: svc.container.batches.publicKey,
      logKey: svc.container.log.network().verifier_key,
      webhook: { id: hook.id, key: rotated.signing_key },
    };
    clear = await stored(svc.container.db);
    expect(new Set(clear.map((v) => v.column))).toEqual(new Set(COLUMNS));
    for (const v of clear) expect(v.value.startsWith('sealed:')).toBe(false);
    await stop(svc);
  });

  it('is sealed at the first start with SECRETS_KEY, each secret the same as before', async () => {
    const svc = await start({ SECRETS_KEY: A }, url);
    const opened = await expectAllSealed(svc.container.db, idA, Buffer.from(A, 'hex'));
    expect(byPlace(opened)).toEqual(byPlace(clearOf(clear)));
    // Counts only, one line per table.
    const lines = svc.logs.filter((l) => l.msg === 'stored secrets sealed under SECRETS_KEY');
    expect(lines.map((l) => [l.table, l.sealed, l.resealed])).toEqual([
      ['signing_keys', 1, 0],
      ['webhooks', 2, 0],
      ['batch_keys', 1, 0],
      ['batch_salt_keys', 1, 0],
      ['log_keys', 1, 0],
    ]);
    const logs = JSON.stringify(svc.logs);
    for (const v of clearOf(clear)) expect(logs).not.toContain(v.value);
    // The same keys: a token issued before verifies, the batch and log keys are the same,
    // and a delivery verifies with the webhook key answered before.
    expect(svc.container.batches.publicKey).toBe(before.batchKey);
    expect(svc.container.log.network().verifier_key).toBe(before.logKey);
    const res = await svc.app.inject({ method: 'GET', url: '/webhooks', headers });
    expect(res.statusCode, res.body).toBe(200);
    const r = await receiver();
    await call(svc, owner.signer, 'PUT', `/webhooks/${before.webhook.id}`, { url: r.url });
    await execute(svc, owner.signer, 'mint', { template_id: owner.templateId }, 2);
    await svc.container.webhookWorker.runOnce();
    // The delivery queued before the restart too (its webhook's address is the new one).
    expect(r.received).toHaveLength(2);
    for (const got of r.received) {
      expect(
        await verifyWebhook(got.headers, got.body, before.webhook.key, { now: svc.clock.now() }),
      ).toMatchObject({ ok: true });
    }
    // The same salt key: the batches' contents (private commitments) are rebuilt the same.
    const proven = await proveAll(svc);
    expect((await batchContents(svc, proven)).slice(0, contents.length)).toEqual(contents);
    await expectBatchesVerify(svc, false);
    await expectCheckpointVerifies(svc);
    await stop(svc);
  });

  it('then stops every start without SECRETS_KEY, or with another key, naming it; nothing is replaced', async () => {
    const sealed = await storedAt(url);
    expect(sealed.every((v) => v.value.startsWith(`sealed:v1:${idA}:`))).toBe(true);
    const unset = await refusal({}, url);
    expect(unset).toMatch(/SECRETS_KEY is not set/);
    expect(unset).toContain(idA);
    const wrong = await refusal({ SECRETS_KEY: B }, url);
    expect(wrong).toContain(`neither SECRETS_KEY (key id ${idB})`);
    expect(wrong).toContain(idA);
    const svc = await start({ SECRETS_KEY: A }, url);
    await stop(svc);
    expect(byPlace(await storedAt(url))).toEqual(byPlace(sealed));
  });

  it('is sealed again under a new key with the old one in SECRETS_KEY_PREVIOUS', async () => {
    const svc = await start({ SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A }, url);
    const opened = await expectAllSealed(svc.container.db, idB, Buffer.from(B, 'base64url'));
    expect(byPlace(opened)).toEqual(byPlace(clearOf(clear)));
    const lines = svc.logs.filter((l) => l.msg === 'stored secrets sealed under SECRETS_KEY');
    expect(lines.map((l) => [l.table, l.resealed])).toEqual([
      ['signing_keys', 1],
      ['webhooks', 2],
      ['batch_keys', 1],
      ['batch_salt_keys', 1],
      ['log_keys', 1],
    ]);
    await stop(svc);
    // The old key can go; it alone no longer opens them.
    await stop(await start({ SECRETS_KEY: B }, url));
    expect(await refusal({ SECRETS_KEY: A }, url)).toContain(idB);
  });
});

describe('processes starting together', () => {
  it('seal each clear value once', async () => {
    const svc = await start({});
    const { signer, templateId } = await signerWithTemplate(svc);
    const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
      { template_id: templateId },
    ]);
    await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    const clear = await stored(svc.container.db);
    const sealer = new SecretSealer({ key: Buffer.from(A, 'hex'), previous: [] });
    const runs = await Promise.all(
      [0, 1, 2].map(() => sealStoredSecrets(svc.container.db, sealer, SECRET_TABLES)),
    );
    const total = runs
      .flatMap((counts) => Object.values(counts))
      .reduce((n, c) => n + c.sealed + c.resealed, 0);
    expect(total).toBe(clear.length);
    const opened = await expectAllSealed(svc.container.db, idA, Buffer.from(A, 'hex'));
    expect(byPlace(opened)).toEqual(byPlace(clearOf(clear)));
  });
});

describe('values sealed under SECRETS_KEY itself', () => {
  it('must open at start: one copied from another row stops it, naming the place', async () => {
    const svc = await start({ SECRETS_KEY: A });
    const url = svc.config.databaseUrl!;
    const { signer, templateId } = await signerWithTemplate(svc);
    const rules = [{ template_id: templateId }];
    const one = await createWebhook(svc, signer, 'https://127.0.0.1:9/a', rules);
    const two = await createWebhook(svc, signer, 'https://127.0.0.1:9/b', rules);
    await stop(svc);
    // Webhook two's key replaced by one's, as stored (sealed under A, bound to webhook one).
    const admin = await start({ SECRETS_KEY: A, WEBHOOK_DELIVERY: 'false' }, url);
    await admin.container.db.execute(sql`UPDATE webhooks SET signing_key =
      (SELECT signing_key FROM webhooks WHERE id = ${one.id}) WHERE id = ${two.id}`);
    await stop(admin);
    const why = await refusal({ SECRETS_KEY: A }, url);
    expect(why).toContain(`webhooks.signing_key (row ${two.id}) does not open`);
  });

  it("a previous key copied as stored from the current one (an older release's rotation) opens", async () => {
    const svc = await start({ SECRETS_KEY: A });
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    // What an older release's rotate-key did: the stored current key copied as it is.
    const next = newSigningKey();
    const sealer = new SecretSealer({ key: Buffer.from(A, 'hex'), previous: [] });
    await svc.container.db.execute(sql`UPDATE webhooks SET
        previous_signing_key = signing_key, previous_key_until = ${new Date(svc.clock.now().getTime() + 3_600_000)},
        signing_key = ${sealer.sealBytes(next, { column: 'webhooks.signing_key', row: hook.id })}
      WHERE id = ${hook.id}`);
    // The start-up pass takes it, and a delivery carries both signatures.
    const again = await start({ SECRETS_KEY: A }, svc.config.databaseUrl!);
    await stop(svc);
    await execute(again, signer, 'mint', { template_id: templateId }, 0);
    await again.container.webhookWorker.runOnce();
    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    const now = { now: again.clock.now() };
    expect(await verifyWebhook(got.headers, got.body, next.toString('hex'), now)).toMatchObject({
      ok: true,
    });
    expect(await verifyWebhook(got.headers, got.body, hook.signing_key, now)).toMatchObject({
      ok: true,
    });
  });
});

describe('the start-up pass and a rotation at once', () => {
  it('never writes a value over a key rotated after it was read', async () => {
    const svc = await start({});
    const { signer, templateId } = await signerWithTemplate(svc);
    const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
      { template_id: templateId },
    ]);
    const sealer = new SecretSealer({ key: Buffer.from(A, 'hex'), previous: [] });
    const column = webhookSecrets.columns[0]!;
    // The pass reads the clear key and seals it…
    const rows = await column.read(svc.container.db, '', true);
    const changes = rows.map((r) => ({
      row: r.row,
      old: r.value,
      value: sealer.reseal(r.value, { column: column.name, row: r.row })!,
    }));
    // …a rotation commits a new key…
    const rotated = await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    // …and the pass's write finds the row changed: it writes nothing.
    expect(await column.store(svc.container.db, changes)).toBe(0);
    const now = await stored(svc.container.db);
    const current = now.find((v) => v.column === 'webhooks.signing_key' && v.row === hook.id)!;
    expect(Buffer.from(current.value, 'latin1').toString('hex')).toBe(rotated.signing_key);
  });
});

describe('a webhook key that does not open after the start', () => {
  it("holds up that webhook's deliveries only, and says so", async () => {
    const svc = await start({ SECRETS_KEY: A });
    const { signer, templateId } = await signerWithTemplate(svc);
    const rules = [{ template_id: templateId }];
    const [good, bad] = [await receiver(), await receiver()];
    const keep = await createWebhook(svc, signer, good.url, rules);
    const broken = await createWebhook(svc, signer, bad.url, rules);
    // Written behind the service's back: the other webhook's key, bound to it.
    await svc.container.db.execute(sql`UPDATE webhooks SET signing_key =
      (SELECT signing_key FROM webhooks WHERE id = ${keep.id}) WHERE id = ${broken.id}`);
    // The fast lane hands only the good delivery; the claim later skips the broken one.
    await execute(svc, signer, 'mint', { template_id: templateId }, 0);
    await svc.container.webhookWorker.runOnce();
    svc.clock.advance(120_000);
    await svc.container.webhookWorker.runOnce();
    expect(good.received).toHaveLength(1);
    expect(bad.received).toHaveLength(0);
    const said = svc.logs.filter(
      (l) => l.msg === 'a webhook signing key does not open: its delivery waits',
    );
    expect(said.map((l) => l.webhook_id)).toContain(broken.id);
    expect(JSON.stringify(said)).not.toMatch(/sealed:v1:/);
  });
});
