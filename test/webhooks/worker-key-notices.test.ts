import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep, spawnService } from '../helpers/processes.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import { call, createWebhook, execute, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * A worker (ONS_ROLE=worker) that delivers with SECRETS_KEY set keeps each webhook key it
 * opens, and listens for the notice another process sends when it rotates or deletes one
 * (src/notices.ts, `createWorkerNoticeListener`): the key leaves the worker's memory at once.
 * Seen from outside through the worker's `ons_webhook_keys_opened` (docs/self-hosting.md,
 * "Metrics").
 */
const KEY = randomBytes(32).toString('hex');
let ca: TestCa;
let api: TestService;
let receiver: Receiver;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ca = await makeTestCa();
  // The API in this process (it delivers nothing); the worker in its own, on the same database.
  api = await startTestService({
    env: {
      SECRETS_KEY: KEY,
      WEBHOOK_DELIVERY: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: ca.caFile,
    },
  });
  receiver = await startReceiver(ca);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await receiver.close();
  await api.stop();
});

async function eventually(check: () => Promise<boolean>, ms: number, what: string) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

describe("a worker's opened webhook keys", () => {
  it('leave it when another process rotates the key or deletes the webhook', async () => {
    const worker = await spawnService(
      api,
      {
        ONS_ROLE: 'worker',
        SECRETS_KEY: KEY,
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_CA_FILE: ca.caFile,
        BATCH_SEALER: 'false',
      },
      undefined,
      'worker.js',
    );
    children.push(worker.child);
    const opened = async () => {
      const text = await (await fetch(`${worker.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('ons_webhook_keys_opened '));
      return line === undefined ? null : Number(line.split(' ')[1]);
    };
    expect(await opened()).toBe(0);

    const owner = await signerWithTemplate(api);
    const hook = await createWebhook(api, owner.signer, receiver.url, [
      { template_id: owner.templateId },
    ]);
    // The worker delivers the action's event, opening the webhook's key.
    await execute(api, owner.signer, 'mint', { template_id: owner.templateId }, 0);
    await eventually(async () => receiver.received.length === 1, 20_000, 'the delivery');
    await eventually(async () => (await opened()) === 1, 5_000, 'one key opened');

    // Rotated by the API process: the worker hears it and forgets the key it opened.
    await call(api, owner.signer, 'POST', `/webhooks/${hook.id}/rotate-key`);
    await eventually(async () => (await opened()) === 0, 5_000, 'the key forgotten');

    // After the rotation a delivery is signed with the new key and the previous one: two
    // opened; deleting the webhook takes both.
    await execute(api, owner.signer, 'mint', { template_id: owner.templateId }, 1);
    await eventually(async () => receiver.received.length === 2, 20_000, 'the second delivery');
    await eventually(async () => (await opened()) === 2, 5_000, 'two keys opened');
    await call(api, owner.signer, 'DELETE', `/webhooks/${hook.id}`);
    await eventually(async () => (await opened()) === 0, 5_000, 'both keys forgotten');
  }, 90_000);
});
