import { afterAll, afterEach, beforeAll } from 'vitest';
import { startTestService, type TestService } from './service.js';
import { makeTestCa, startReceiver, type Receiver, type TestCa } from './webhook-receiver.js';

/**
 * The set-up the webhook delivery tests share: a service that trusts a test CA and may
 * deliver to loopback, real HTTPS receivers closed after each test, and one run of the
 * delivery worker. Call at the top of a test file; read `svc` inside tests and hooks.
 */
export function webhookSuite() {
  let svc: TestService | undefined;
  let ca: TestCa | undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    ca = await makeTestCa();
    svc = await startTestService({
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CA_FILE: ca.caFile },
    });
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await svc?.stop();
  });
  const started = (): TestService => {
    if (!svc) throw new Error('webhookSuite: the service starts in beforeAll');
    return svc;
  };
  return {
    get svc(): TestService {
      return started();
    },
    async receiver(answer?: Receiver['answer']): Promise<Receiver> {
      const r = await startReceiver(ca!, answer);
      receivers.push(r);
      return r;
    },
    deliver: () => started().container.webhookWorker.runOnce(),
  };
}
