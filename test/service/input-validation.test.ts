import { beforeAll, describe, expect, it } from 'vitest';
import { idKindOfPattern, newId } from '../../src/lib/ids.js';
import { MAX_INPUT_DEPTH } from '../../src/lib/input-check.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertTemplate } from '../helpers/objects.js';
import { useTestService } from '../helpers/harness.js';

let owner: TestMember;
let templateId: string;

const svc = useTestService();
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
  templateId = await insertTemplate(svc, owner.orgId, { actions: ['mint'] });
});

type Res = { statusCode: number; json<T = unknown>(): T; body: string };

/** 400 code 3 whose first field issue names `field`. */
function expectInvalid(res: Res, field: string) {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json<{
    code: number;
    message: string;
    details: { fields: { field: string }[] };
  }>();
  expect(body.code).toBe(3);
  expect(typeof body.message).toBe('string');
  expect(body.details.fields[0]!.field).toBe(field);
}

const get = (url: string, headers: Record<string, string> = owner.headers) =>
  svc.app.inject({ method: 'GET', url, headers });
const post = (url: string, payload: unknown, headers: Record<string, string> = owner.headers) =>
  svc.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

const cursor = (v: unknown, s = 'when_created') =>
  Buffer.from(JSON.stringify({ s, o: 'desc', v, i: newId('organization') })).toString('base64url');

describe('NUL characters and lone surrogates', () => {
  it('refuses a NUL in a query value, a path parameter and a body field, naming it', async () => {
    expectInvalid(await get('/organizations?name=a%00b'), 'name');
    expectInvalid(await get('/organizations/org_%00'), 'organizationId');
    expectInvalid(await post('/support', { title: 'a\u0000b', content: 'x' }), 'title');
  });

  it('refuses them in action params before prepare answers, in values and in keys', async () => {
    const prepare = (params: unknown) =>
      post('/ebus/prepare', { action: { name: 'mint', params } });
    const ok = await prepare({ template_id: templateId, custom: { note: 'fine' } });
    expect(ok.statusCode, ok.body).toBe(200);
    expectInvalid(
      await prepare({ template_id: `${templateId}\u0000` }),
      'action.params.template_id',
    );
    expectInvalid(
      await prepare({ template_id: templateId, custom: { note: 'x\ud800' } }),
      'action.params.custom.note',
    );
    expectInvalid(
      await prepare({ template_id: templateId, custom: { 'k\u0000': 1 } }),
      'action.params.custom.k\uFFFD',
    );
  });

  it('refuses a NUL in a header a handler reads', async () => {
    const res = await post(
      '/auth/login',
      { email: 'nobody@example.test', password: 'whatever-password' },
      { 'user-agent': 'agent\u0000' },
    );
    expectInvalid(res, 'user-agent');
  });
});

describe('lists', () => {
  it('refuses sortBy values that name Object members, with no credential needed', async () => {
    for (const sortBy of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expectInvalid(await get(`/public/objects?sortBy=${sortBy}`, {}), 'sortBy');
      expectInvalid(await get(`/organizations?sortBy=${sortBy}`), 'sortBy');
    }
  });

  it('refuses forged cursors whose date PostgreSQL would refuse', async () => {
    for (const v of ['2024', '-1', '2024-06-31', '0000-01-01T00:00:00Z', 7, null]) {
      expectInvalid(await get(`/organizations?next=${cursor(v)}`), 'next');
    }
    expectInvalid(
      await get(`/organizations?sortBy=name&next=${cursor('a\u0000', 'name')}`),
      'next',
    );
  });

  it('still pages with the cursors it hands out', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post('/organizations', { name: `Paged ${i}` });
      expect(res.statusCode, res.body).toBe(200);
    }
    for (const sortBy of ['when_created', 'name']) {
      const first = (await get(`/organizations?limit=2&sortBy=${sortBy}`)).json<{ next: string }>();
      expect(first.next).not.toBe('');
      const second = await get(`/organizations?limit=2&sortBy=${sortBy}&next=${first.next}`);
      expect(second.statusCode, second.body).toBe(200);
    }
  });

  it('refuses dates PostgreSQL refuses, and takes the ones it reads', async () => {
    for (const date of [
      '0000-01-01T00:00:00Z',
      '2024-01-01T00:00:00%2B23:59',
      '2024-01-01T23:59:60Z',
      '2024-02-30T00:00:00Z',
    ]) {
      expectInvalid(await get(`/organizations?when_created[$gt]=${date}`), 'when_created[$gt]');
    }
    for (const date of ['0001-01-01T00:00:00Z', '2024-01-01T00:00:00%2B15:59']) {
      const res = await get(`/organizations?when_created[$gt]=${date}`);
      expect(res.statusCode, res.body).toBe(200);
    }
  });
});

describe('nesting', () => {
  it(`refuses a body nested deeper than ${MAX_INPUT_DEPTH} levels, 10,000 deep included`, async () => {
    for (const depth of [MAX_INPUT_DEPTH, 10_000]) {
      const deep = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const res = await post(
        '/ebus/prepare',
        `{"action":{"name":"mint","params":{"template_id":"${templateId}","custom":${deep}}}}`,
      );
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json<{ code: number }>().code).toBe(3);
      expect(res.json<{ message: string }>().message).toMatch(/nested deeper/);
    }
  });
});

describe('router errors', () => {
  it('answers a path that is not UTF-8 and an overlong parameter with the flat body', async () => {
    const bad = await get('/organizations/%FF%FE');
    expectInvalid(bad, 'path');
    expect(bad.headers['x-request-id']).toBeTruthy();
    expectInvalid(await get(`/organizations/${'a'.repeat(10_000)}`), 'path');
    expectInvalid(await get(`/organizations/${'a'.repeat(500)}`), 'organizationId');
  });
});

describe('path ids', () => {
  it('refuses a malformed id with 400 code 3 naming the parameter', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/templates/not-an-id', 'id'],
      ['GET', '/objects/not-an-id', 'id'],
      ['GET', '/organizations/not-an-id', 'organizationId'],
      ['GET', '/support/not-an-id', 'messageId'],
      ['GET', '/public/templates/not-an-id', 'id'],
      ['DELETE', '/wallets/me/credentials/not-an-id', 'credentialId'],
      ['DELETE', '/wallets/sessions/not-an-id', 'sessionId'],
      [
        'GET',
        `/organizations/${owner.orgId}/members`.replace(owner.orgId, 'org_x'),
        'organizationId',
      ],
      ['DELETE', `/organizations/${owner.orgId}/members/mem_x`, 'memberId'],
      ['GET', '/indexer/objects/obj_x/history', 'id'],
      ['DELETE', '/api-keys/key_x', 'id'],
      ['GET', `/templates/${newId('object')}`, 'id'],
    ];
    for (const [method, url, field] of cases) {
      const res = await svc.app.inject({ method: method as 'GET', url, headers: owner.headers });
      expectInvalid(res, field);
    }
  });

  it('keeps 404 code 5 for a well-formed id that names nothing', async () => {
    for (const url of [
      `/templates/${newId('template')}`,
      `/objects/${newId('object')}`,
      `/organizations/${newId('organization')}`,
      `/support/${newId('message')}`,
      `/public/templates/${newId('template')}`,
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json<{ code: number }>().code).toBe(5);
    }
  });

  it('declares an id pattern for every path parameter of every route', async () => {
    const spec = (await get('/openapi.json', {})).json<{
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: {
              in: string;
              name: string;
              schema: { pattern?: string; type?: string; minimum?: number };
            }[];
          }
        >
      >;
    }>();
    // Ids the service does not make: a WebAuthn credential id (base64url, the authenticator's).
    const external = new Set(['GET /public/credentials/{credentialId}']);
    // Addresses (the wallet's and an EOA's, as the action log shows them) and a version number.
    const addresses = new Set(['GET /public/wallets/{address}/signers/{signer}']);
    const numbers = new Set(['GET /public/templates/{id}/versions/{version} {version}']);
    // A C2SP tile path, parsed whole by its route (test/log/log.test.ts refuses malformed ones).
    const tilePaths = new Set(['GET /log/tile/{*} {*}']);
    const missing: string[] = [];
    let checked = 0;
    for (const [path, methods] of Object.entries(spec.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const p of op.parameters ?? []) {
          if (p.in !== 'path') continue;
          checked++;
          if (external.has(`${method.toUpperCase()} ${path}`)) {
            expect(p.schema.pattern, path).toBe('^[A-Za-z0-9_-]+$');
            continue;
          }
          if (addresses.has(`${method.toUpperCase()} ${path}`)) {
            expect(p.schema.pattern, path).toBe('^0x[0-9a-fA-F]{40}$');
            continue;
          }
          if (tilePaths.has(`${method.toUpperCase()} ${path} {${p.name}}`)) continue;
          if (numbers.has(`${method.toUpperCase()} ${path} {${p.name}}`)) {
            expect([p.schema.type, p.schema.minimum], path).toEqual(['integer', 1]);
            continue;
          }
          if (!p.schema.pattern || !idKindOfPattern(p.schema.pattern)) {
            missing.push(`${method.toUpperCase()} ${path} {${p.name}}`);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(15);
    expect(missing).toEqual([]);
  });
});
