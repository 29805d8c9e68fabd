import { expect } from 'vitest';
import { verifyWebhook } from '@ons/sdk';
import { permissionsOfRole, type AuthContext } from '../../src/lib/permissions.js';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa, type EoaSigner } from './ebus.js';
import type { TestMember } from './fixtures.js';
import type { TestService } from './service.js';
import type { Receiver } from './webhook-receiver.js';

/**
 * Headers with an access token valid at the fake clock's now: tests here move the clock by
 * hours, past the 15-minute token lifetime.
 */
export async function headersNow(svc: TestService, m: TestMember): Promise<Record<string, string>> {
  const tokens = await svc.container.sessions.issue(svc.container.db, {
    walletId: m.walletId,
    orgId: m.orgId,
    device: 'test',
  });
  return { authorization: `Bearer ${tokens.access_token}` };
}

/** One API call by `m`, answered as JSON after checking the status. */
export async function call(
  svc: TestService,
  m: TestMember,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  status = 200,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any> {
  const res = await svc.app.inject({
    method,
    url,
    headers: await headersNow(svc, m),
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

export interface CreatedWebhook {
  id: string;
  signing_key: string;
}

/** A webhook made through `POST /webhooks`. */
export async function createWebhook(
  svc: TestService,
  m: TestMember,
  url: string,
  rules: unknown[],
): Promise<CreatedWebhook> {
  return call(svc, m, 'POST', '/webhooks', { url, rules });
}

/** An organization owner who signs with an EOA, funded, with a template of its own. */
export async function signerWithTemplate(
  svc: TestService,
): Promise<{ signer: EoaSigner; templateId: string }> {
  const signer = await createSigner(svc);
  await fund(svc, signer.orgId, ACTION_FEE * 1000n);
  const templateId = await createTemplate(svc, signer.orgId);
  return { signer, templateId };
}

/** Executes one action through `POST /ebus/execute`; answers the applied action log record. */
export async function execute(
  svc: TestService,
  signer: EoaSigner,
  name: string,
  params: Record<string, unknown>,
  nonce: number,
): Promise<{
  action: { id: string; template_id: string; when_created: string };
  object: { id: string };
}> {
  const body = await signEoa(svc, signer, { name, params, nonce });
  return call(svc, signer, 'POST', '/ebus/execute', body);
}

/**
 * Issue 20 item 1: after a rotation, deliveries carry both signatures (`v1=<new>,v1=<old>`)
 * for 24 hours, then only the new one. Executes one action before and one after the 24 hours
 * (nonces 0 and 1); `delivered(n)` waits until the receiver holds `n` deliveries.
 */
export async function expectRotationSignatures(
  svc: TestService,
  r: Receiver,
  { signer, templateId }: { signer: EoaSigner; templateId: string },
  keys: { old: string; rotated: string },
  delivered: (n: number) => Promise<void>,
): Promise<void> {
  const check = async (i: number, key: string) =>
    (
      await verifyWebhook(r.received[i]!.headers, r.received[i]!.body, key, {
        now: svc.clock.now(),
      })
    ).ok;
  await execute(svc, signer, 'mint', { template_id: templateId }, 0);
  await delivered(1);
  expect(r.received[0]!.headers['x-webhook-signature']).toMatch(
    /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/,
  );
  expect(await check(0, keys.rotated)).toBe(true);
  expect(await check(0, keys.old)).toBe(true);
  svc.clock.advance(24 * 60 * 60_000 + 1000);
  await execute(svc, signer, 'mint', { template_id: templateId }, 1);
  await delivered(2);
  expect(r.received[1]!.headers['x-webhook-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(await check(1, keys.rotated)).toBe(true);
  expect(await check(1, keys.old)).toBe(false);
}

/**
 * An owner's in-person AuthContext for `m`, to call the webhooks service directly: in `m`'s
 * session, which creating a webhook asks to be recent (docs/auth.md, "Changing credentials").
 */
export function ownerAuthOf(m: TestMember): AuthContext {
  return {
    kind: 'user',
    walletId: m.walletId,
    orgId: m.orgId,
    role: 'owner',
    permissions: permissionsOfRole('owner'),
    sessionId: m.sessionId,
    apiKeyId: null,
  };
}
