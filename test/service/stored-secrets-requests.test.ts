import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { keyId } from '../../src/lib/sealed-secret.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { stored } from '../helpers/stored-secrets.js';
import { createWebhook, headersNow, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * A request that needs a stored secret this process cannot open: one sealed after the process
 * started, by another process with SECRETS_KEY (or under a key this one was not given). The
 * start-up pass refuses such values at start (test/service/stored-secrets.test.ts); here the
 * process is already serving (docs/self-hosting.md, "Secrets at rest").
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
