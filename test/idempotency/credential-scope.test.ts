import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, crudOf } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * An `Idempotency-Key` belongs to the credential that sent it (docs/api.md, "Idempotent
 * requests"): a replay skips the route's service and every check it makes of the caller, so
 * another credential of the same organization with the same key and request must run its own
 * request. Generated from the route table: every route that takes the header has a request
 * here, and the test fails for one that does not.
 */
let svc: TestService;
let owner: TestMember;
/** A template of the owner's organization, for webhook rules. */
let templateId: string;
// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

beforeAll(async () => {
  svc = await startTestService({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  owner = await createMember(svc, { role: 'owner' });
  const t = await svc.app.inject({
    method: 'POST',
    url: '/templates',
    headers: owner.headers,
    payload: { name: 'rules' },
  });
  templateId = t.json<{ id: string }>().id;
});
afterAll(async () => {
  await svc.stop();
});

let seq = 0;
const unique = () => `${Date.now()}-${++seq}`;

function multipart(name: string, data: Buffer) {
  const boundary = `----scope${unique()}`;
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
        `Content-Type: image/png\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, type: `multipart/form-data; boundary=${boundary}` };
}

/** One request of each route, the same for every caller (only the headers change). */
const REQUESTS: Record<string, () => Omit<InjectOptions, 'headers'> & { type?: string }> = {
  'POST /templates': () => ({ payload: { name: `t-${unique()}` } }),
  'POST /api-keys': () => ({
    payload: { name: `k-${unique()}`, permissions: crudOf(['templates.read']) },
  }),
  'POST /webhooks': () => ({
    payload: { url: 'https://127.0.0.1:9/hook', rules: [{ template_id: templateId }] },
  }),
  'POST /organizations': () => ({ payload: { name: `o-${unique()}` } }),
  'POST /organizations/:organizationId/members': () => ({
    url: `/organizations/${owner.orgId}/members`,
    payload: { email: `m-${unique()}@example.test`, role: 'viewer' },
  }),
  'POST /support': () => ({ payload: { title: 'Help', content: `please ${unique()}` } }),
  'POST /storage/upload': () => {
    const f = multipart(`f-${unique()}.png`, PNG);
    return { payload: f.payload, type: f.type };
  },
};

function send(route: string, request: ReturnType<(typeof REQUESTS)[string]>, headers: object) {
  const [method, url] = route.split(' ') as [InjectOptions['method'], string];
  const { type, ...rest } = request;
  return svc.app.inject({
    method,
    url,
    ...rest,
    headers: { ...headers, ...(type ? { 'content-type': type } : {}) },
  });
}

describe('Idempotency-Key belongs to one credential', () => {
  it('has a request for every route that takes the header', () => {
    const routes = svc
      .routeTable()
      .filter((r) => r.idempotent)
      .map((r) => `${r.method} ${r.url}`);
    expect(routes.length).toBeGreaterThan(0);
    expect(routes.sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  for (const route of Object.keys(REQUESTS)) {
    it(`${route}: replays to its sender only`, async () => {
      const colleague = await createMember(svc, { orgId: owner.orgId, role: 'owner' });
      const ownersKey = await createApiKey(svc, owner, ['templates.read']);
      const key = { 'idempotency-key': `scope-${unique()}` };
      const request = REQUESTS[route]!();
      const first = await send(route, request, { ...owner.headers, ...key });
      expect(first.statusCode, first.body).toBeLessThan(500);
      // The same credential gets the first answer: the key was kept.
      const retry = await send(route, request, { ...owner.headers, ...key });
      expect(retry.headers['idempotent-replayed'], retry.body).toBe('true');
      expect(retry.body).toBe(first.body);
      // Another person of the organization, and the same person's API key, run their own
      // (an upload of the same bytes may answer the same record: files are content-addressed).
      for (const other of [colleague.headers, ownersKey.headers]) {
        const theirs = await send(route, request, { ...other, ...key });
        expect(theirs.statusCode, theirs.body).toBeLessThan(500);
        expect(theirs.headers['idempotent-replayed'], theirs.body).toBeUndefined();
      }
    });
  }

  it('never hands a colleague who holds less the answer of a grant it could not make', async () => {
    const admin = await createMember(svc, { orgId: owner.orgId, role: 'admin' });
    const key = { 'idempotency-key': `grant-${unique()}` };
    const payload = {
      name: `ops-${unique()}`,
      permissions: crudOf(['organizations.delete', 'members.update']),
    };
    const first = await send('POST /api-keys', { payload }, { ...owner.headers, ...key });
    expect(first.statusCode, first.body).toBe(200);
    const replayed = await send('POST /api-keys', { payload }, { ...admin.headers, ...key });
    expect(replayed.statusCode, replayed.body).toBe(403);
    expect(replayed.body).not.toContain(first.json<{ secret: string }>().secret);
  });
});
