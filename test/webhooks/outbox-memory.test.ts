import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.js';
import { webhookSuite } from '../helpers/webhook-suite.js';
import { createWebhook, execute, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * The outbox hook remembers which organizations have no active webhook and leaves their
 * actions out of the group statement, guarded (src/modules/webhooks/outbox-hook.ts,
 * docs/webhooks.md "The outbox"): a webhook made afterwards — by this process or any other —
 * still gets the delivery of the very next action, and nothing is lost.
 */
const suite = webhookSuite();

const deliveriesOf = async (svc: TestService, actionId: string) =>
  (
    await svc.container.db.execute<{ webhook_id: string }>(
      sql`SELECT webhook_id FROM webhook_deliveries WHERE action_id = ${actionId}`,
    )
  ).rows.map((r) => r.webhook_id);

describe('the outbox remembers organizations without webhooks', () => {
  it('queues the next action of an organization that just made its first webhook', async () => {
    const svc = suite.svc;
    const { signer, templateId } = await signerWithTemplate(svc);
    let nonce = 0;
    // Several actions without webhooks: the process now remembers the organization as quiet.
    for (let i = 0; i < 3; i++) {
      const out = await execute(svc, signer, 'mint', { template_id: templateId }, nonce++);
      expect(await deliveriesOf(svc, out.action.id)).toEqual([]);
    }
    // POST /webhooks tells the hook nothing (another process's would not either): the
    // statement's guard finds the webhook, and the group takes the locked path.
    const r = await suite.receiver();
    const hook = await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    const next = await execute(svc, signer, 'mint', { template_id: templateId }, nonce++);
    expect(await deliveriesOf(svc, next.action.id)).toEqual([hook.id]);
    // And the one after it (the memory learnt the webhook).
    const after = await execute(svc, signer, 'mint', { template_id: templateId }, nonce);
    expect(await deliveriesOf(svc, after.action.id)).toEqual([hook.id]);
  });
});
