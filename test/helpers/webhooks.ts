import { expect } from 'vitest';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa, type EoaSigner } from './ebus.js';
import type { TestMember } from './fixtures.js';
import type { TestService } from './service.js';

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
