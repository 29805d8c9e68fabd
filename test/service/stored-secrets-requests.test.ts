import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { keyId } from '../../src/lib/sealed-secret.js';
import { previousKeyAt, signingKeyAt } from '../../src/modules/webhooks/keys.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { stored } from '../helpers/stored-secrets.js';
import { call, createWebhook, headersNow, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Requests that meet stored secrets in a serving process (docs/self-hosting.md, "Secrets at
 * rest"): one sealed after the process started, by another process with SECRETS_KEY (or under
 * a key this one was not given), which the start-up pass could not refuse
 * (test/service/stored-secrets.test.ts); and a webhook's opened keys, forgotten once rotated
 * or deleted.
 */
const A = randomBytes(32).toString('hex');
const idA = keyId(Buffer.from(A, 'hex'));

const services: TestService[] = [];
afterAll(async () => {
  for (const s of services.splice(0)) await s.stop();
});

async function start(env: Record<string, string>, databaseUrl?: string): Promise<TestService> {
  const svc = await startTestService({
    env: { WEBHOOK_DELIVERY: 'false', WEBHOOK_ALLOW_LOOPBACK: 'true', ...env },
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  services.push(svc);
  return svc;
}

describe('a process without SECRETS_KEY, after another sealed the secrets', () => {
  it('answers rotate-key 503 code 14 with a flat body, changes nothing, and logs why', async () => {
    const clear = await start({});
    const { signer, templateId } = await signerWithTemplate(clear);
    const hook = await createWebhook(clear, signer, 'https://127.0.0.1:9/hook', [
      { template_id: templateId },
    ]);
    // Another process starts with the key: its start-up pass seals every value.
    const sealing = await start({ SECRETS_KEY: A }, clear.config.databaseUrl!);
    const before = await stored(sealing.container.db);
    const read = async () =>
      (
        await clear.app.inject({
          method: 'GET',
          url: `/webhooks/${hook.id}`,
          headers: await headersNow(clear, signer),
        })
      ).json<unknown>();
    const record = await read();
    const key = before.find((v) => v.column === 'webhooks.signing_key' && v.row === hook.id)!;
    expect(key.value.startsWith(`sealed:v1:${idA}:`)).toBe(true);

    const res = await clear.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/rotate-key`,
      headers: await headersNow(clear, signer),
    });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toEqual({
      code: 14,
      message: expect.stringMatching(/stored secret .* cannot open/),
      details: { retry_after_seconds: 60 },
    });
    // Nothing half-applied: both keys as they were, the webhook unchanged.
    expect(await stored(sealing.container.db)).toEqual(before);
    expect(await read()).toEqual(record);
    // The operator reads why, naming the setting and the key id; no key in any line.
    const said = clear.logs.filter(
      (l) => l.msg === 'a stored secret does not open in this process',
    );
    expect(said).toHaveLength(1);
    expect(said[0]!.reason).toMatch(/SECRETS_KEY is not set/);
    expect(said[0]!.reason).toContain(idA);
    expect(clear.logs.filter((l) => l.msg === 'unhandled error')).toEqual([]);
    const logs = JSON.stringify(clear.logs);
    expect(logs).not.toContain(hook.signing_key);
    expect(logs).not.toContain(key.value);

    // The process with the key rotates it.
    const ok = await sealing.app.inject({
      method: 'POST',
      url: `/webhooks/${hook.id}/rotate-key`,
      headers: await headersNow(sealing, signer),
    });
    expect(ok.statusCode, ok.body).toBe(200);
  });
});

describe("a webhook's opened keys", () => {
  it('are forgotten by the process that rotates the key or deletes the webhook, and by every other', async () => {
    const svc = await start({ SECRETS_KEY: A });
    // Another process on the database, which opened the keys too (its deliveries would).
    const other = await start({ SECRETS_KEY: A }, svc.config.databaseUrl!);
    const { signer, templateId } = await signerWithTemplate(svc);
    const hook = await createWebhook(svc, signer, 'https://127.0.0.1:9/hook', [
      { template_id: templateId },
    ]);
    const processes = [svc, other].map((p) => p.container.webhooks.secrets);
    /** Each key column's stored value (hex) and what each process answers for it now. */
    const keysNow = async () =>
      (await stored(svc.container.db))
        .filter((v) => v.row === hook.id)
        .map((v) => {
          const at =
            v.column === 'webhooks.signing_key' ? signingKeyAt(hook.id) : previousKeyAt(hook.id);
          const hex = Buffer.from(v.value, 'latin1').toString('hex');
          return { hex, at, opened: processes.map((s) => s.openKeyHex(hex, at)) };
        });
    /** Whether each of `keys` is still remembered by each process: the same bytes answered. */
    const remembered = (keys: Awaited<ReturnType<typeof keysNow>>) =>
      processes.map((s, i) => keys.map((k) => s.openKeyHex(k.hex, k.at) === k.opened[i]));
    /** `remembered(keys)` once it is `expected`, polled for at most a second. */
    const rememberedSoon = async (keys: Awaited<ReturnType<typeof keysNow>>, expected: unknown) => {
      const deadline = performance.now() + 1_000;
      let now = remembered(keys);
      while (JSON.stringify(now) !== JSON.stringify(expected) && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        now = remembered(keys);
      }
      return now;
    };

    const created = await keysNow();
    expect(created).toHaveLength(1);
    expect(remembered(created)).toEqual([[true], [true]]);
    await call(svc, signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    // The rotating process at once; the other when the rotation's notice arrives.
    expect(remembered(created)[0]).toEqual([false]);
    expect(await rememberedSoon(created, [[false], [false]])).toEqual([[false], [false]]);

    const rotated = await keysNow();
    expect(rotated).toHaveLength(2);
    expect(remembered(rotated)).toEqual([
      [true, true],
      [true, true],
    ]);
    await call(svc, signer, 'DELETE', `/webhooks/${hook.id}`);
    expect(remembered(rotated)[0]).toEqual([false, false]);
    const gone = [
      [false, false],
      [false, false],
    ];
    expect(await rememberedSoon(rotated, gone)).toEqual(gone);
  });
});
