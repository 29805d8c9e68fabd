import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  Code,
  createOnsClient,
  isOnsError,
  OnsError,
  type Answer,
  type OnsClient,
  type paths,
} from '@ons/sdk';
import { allPermissions, createApiKey } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { createTemplate } from '../helpers/ebus.js';
import { startLiveService, type LiveService } from './live-service.js';

let live: LiveService;
let owner: TestMember;
let ons: OnsClient;

beforeAll(async () => {
  live = await startLiveService();
  owner = await createMember(live.svc, { role: 'owner' });
  const key = await createApiKey(live.svc, owner, allPermissions());
  ons = createOnsClient({ baseUrl: live.baseUrl, apiKey: key.secret });
});
afterAll(async () => {
  await live.stop();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err,
  );

describe('typed calls', () => {
  it('call routes with path and query params and bodies, and resolve to the answer', async () => {
    const templateId = await createTemplate(live.svc, owner.orgId);
    const template = await ons.GET('/templates/{id}', { params: { path: { id: templateId } } });
    expectTypeOf(template).toEqualTypeOf<Answer<'/templates/{id}', 'get'>>();
    expectTypeOf(template.name).toEqualTypeOf<string>();
    expect(template).toMatchObject({ id: templateId, name: 'Ticket' });

    const page = await ons.GET('/templates', { params: { query: { limit: 1 } } });
    expect(page.templates).toHaveLength(1);
    expect(typeof page.has_more).toBe('boolean');

    const network = await ons.GET('/public/network');
    expect(network).toEqual({
      network: 'ons-test',
      token: 'ONS',
      decimals: 18,
      batch_public_key: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      webauthn: { rp_id: 'localhost', origins: ['http://localhost:8080'] },
      log: { origin: expect.any(String), verifier_key: expect.any(String), witnesses: [] },
    });

    const changed = await ons.PATCH('/organizations/{organizationId}', {
      params: { path: { organizationId: owner.orgId } },
      body: { description: 'changed through the SDK' },
    });
    expect(changed).toBeDefined();
    const org = await ons.GET('/organizations/{organizationId}', {
      params: { path: { organizationId: owner.orgId } },
    });
    expect(org.description).toBe('changed through the SDK');
  });

  it('are checked by the compiler: paths, params, bodies and answers', () => {
    // Never run: the compiler checks what each line may and may not say.
    const compileOnly = () => {
      // @ts-expect-error: no such route
      void ons.GET('/no/such/route');
      // @ts-expect-error: the path parameter is required
      void ons.GET('/templates/{id}');
      // @ts-expect-error: login needs a password
      void ons.POST('/auth/login', { body: { email: 'a@example.test' } });
      // @ts-expect-error: limit is a number
      void ons.GET('/templates', { params: { query: { limit: 'ten' } } });
      // @ts-expect-error: GET /ebus/execute does not exist (it is a POST)
      void ons.GET('/ebus/execute');
      void ons.POST('/auth/login', { body: { email: 'a@example.test', password: 'pw' } });
    };
    expect(typeof compileOnly).toBe('function');
    expectTypeOf<Answer<'/auth/login', 'post'>>().toHaveProperty('refresh_token');
    expectTypeOf<keyof paths>().toEqualTypeOf<keyof paths>();
  });

  it('reach every operation of the live /openapi.json at the URL the SDK builds', async () => {
    const description = (await (await fetch(`${live.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(description.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((method) => [method.toUpperCase(), path] as const),
    );
    expect(operations.length).toBeGreaterThan(60);
    const call = (method: string, path: string, init: unknown) =>
      (ons[method as 'GET'] as (p: string, i: unknown) => Promise<unknown>)(path, init);
    for (const [method, path] of operations) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      const params = { path: Object.fromEntries(names.map((n) => [n, 'sdk-probe'])) };
      const outcome = await call(method, path, { params }).then(
        () => 'answered',
        (err: unknown) => err,
      );
      if (outcome === 'answered') continue;
      // Refusals are fine (probe ids, empty bodies); an unrouted URL or a transport error is not.
      expect(outcome, `${method} ${path}`).toBeInstanceOf(OnsError);
      const e = outcome as OnsError;
      expect(e.status, `${method} ${path}: ${e.message}`).toBeGreaterThan(0);
      expect(e.message, `${method} ${path}`).not.toMatch(/^no route/);
      expect(e.requestId, `${method} ${path}`).toMatch(/^req_/);
    }
  });

  it('upload a file as multipart', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    const file = await ons.upload(new Blob([png]), { filename: 'dot.png', isPublic: true });
    expect(file).toMatchObject({ name: 'dot.png', type: 'image/png', is_public: true });
    // The file's bytes: not JSON, so read with openapi-fetch's parseAs.
    const bytes = await ons.GET('/storage/files/{id}', {
      params: { path: { id: file.id } },
      parseAs: 'arrayBuffer',
    });
    expectTypeOf(bytes).toEqualTypeOf<ArrayBuffer>();
    expect(Buffer.from(bytes).equals(png)).toBe(true);
    expect(await failure(ons.upload(new Blob(['<svg/>']), { filename: 'x.svg' }))).toMatchObject({
      code: Code.INVALID_ARGUMENT,
      status: 400,
    });
  });
});

describe('errors', () => {
  it('are one OnsError with the flat body, the status and the X-Request-Id', async () => {
    const err = await failure(ons.POST('/support', { body: { title: '', content: 'x' } as never }));
    expect(err).toBeInstanceOf(OnsError);
    expect(isOnsError(err)).toBe(true);
    const e = err as OnsError;
    expect(e.name).toBe('OnsError');
    expect(e.code).toBe(Code.INVALID_ARGUMENT);
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/title|wallet_id/);
    expect(e.details?.fields?.[0]).toMatchObject({ field: expect.any(String) });
    expect(e.requestId).toMatch(/^req_[0-9A-Z]{26}$/);
    expect(e).toBeInstanceOf(Error);
  });

  it('carry the caller’s own request id when one was sent', async () => {
    const e = (await failure(
      ons.GET('/templates/{id}', {
        params: { path: { id: 'tpl_01JD00000000000000000000ZZ' } },
        headers: { 'x-request-id': 'sdk-test.42' },
      }),
    )) as OnsError;
    expect(e).toMatchObject({ code: Code.NOT_FOUND, status: 404, requestId: 'sdk-test.42' });
  });

  it('name a missing credential (401 code 16) and a missing permission (403 code 7)', async () => {
    const anonymous = createOnsClient({ baseUrl: live.baseUrl });
    expect(await failure(anonymous.GET('/templates'))).toMatchObject({
      code: Code.UNAUTHENTICATED,
      status: 401,
      message: 'no auth provided',
    });
    const readOnly = await createApiKey(live.svc, owner, ['templates.read']);
    const limited = createOnsClient({ baseUrl: live.baseUrl, apiKey: readOnly.secret });
    expect(await failure(limited.GET('/webhooks'))).toMatchObject({
      code: Code.PERMISSION_DENIED,
      status: 403,
    });
  });

  it('say 14 with status 0 when the service cannot be reached', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((r) => server.close(() => r()));
    const down = createOnsClient({ baseUrl: `http://127.0.0.1:${port}` });
    const e = (await failure(down.GET('/public/network'))) as OnsError;
    expect(e).toBeInstanceOf(OnsError);
    expect(e).toMatchObject({ code: Code.UNAVAILABLE, status: 0, requestId: null });
    expect(e.cause).toBeDefined();
  });

  it('come from the status when the answer is not the service’s body (a proxy’s page)', async () => {
    const proxied = createOnsClient({
      baseUrl: live.baseUrl,
      fetch: async () =>
        new Response('<html>Bad Gateway</html>', {
          status: 502,
          headers: { 'content-type': 'text/html', 'retry-after': '3' },
        }),
    });
    expect(await failure(proxied.GET('/public/network'))).toMatchObject({
      code: Code.UNAVAILABLE,
      status: 502,
      message: 'HTTP 502: <html>Bad Gateway</html>',
      details: undefined,
      requestId: null,
      retryAfterSeconds: 3,
    });
  });

  it('let an abort through as it is', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(ons.GET('/public/network', { signal: controller.signal }));
    expect(err).not.toBeInstanceOf(OnsError);
    expect((err as Error).name).toBe('AbortError');
  });
});

describe('the raw openapi-fetch client', () => {
  it('answers {data, error, response} on the same credentials, for headers', async () => {
    const ok = await ons.raw.GET('/ebus/nonce', {
      params: { query: { address: owner.address } },
    });
    expect(ok.data).toEqual({ address: owner.address, nonce: 0, organization_id: owner.orgId });
    expect(ok.response.headers.get('x-ratelimit-limit')).toBeNull(); // limits are off here
    expect(ok.response.headers.get('x-request-id')).toMatch(/^req_/);
    const bad = await ons.raw.GET('/templates/{id}', { params: { path: { id: 'nope' } } });
    expect(bad.error).toMatchObject({ code: 3 });
  });
});
