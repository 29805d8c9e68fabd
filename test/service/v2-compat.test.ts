import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, allPermissions } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { startTestService, type TestService } from '../helpers/service.js';

const SUNSET = '2026-06-30T00:00:00.000Z';
const RENAMES: [string, string][] = [
  ['/user/profile', '/wallets/me'],
  ['/user/login', '/wallets/login'],
  ['/user/register', '/wallets/register'],
  ['/vatoms', '/objects'],
  ['/activity', '/ebus/actions'],
  ['/user/token/refresh', '/wallets/token/refresh'],
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'] as const;

let owner: TestMember;

const svc = useTestService();
beforeAll(async () => {
  owner = await createMember(svc);
});

const beforeSunset = () => svc.clock.set('2026-06-29T23:59:59.999Z');
const afterSunset = () => svc.clock.set(SUNSET);

describe('v2 paths before the sunset', () => {
  it('redirect every renamed path and every method to the v3 path with 301, no credential needed', async () => {
    beforeSunset();
    for (const [v2, v3] of RENAMES) {
      for (const method of METHODS) {
        const res = await svc.app.inject({ method, url: v2 });
        expect(res.statusCode, `${method} ${v2}`).toBe(301);
        expect(res.headers.location, `${method} ${v2}`).toBe(v3);
        expect(res.headers.deprecation).toBe('true');
        expect(res.headers.sunset).toBe('Tue, 30 Jun 2026 00:00:00 GMT');
        expect(res.headers['x-request-id']).toMatch(/^req_/);
      }
    }
  });

  it('keep the sub-path and the query string in the Location', async () => {
    beforeSunset();
    const cases: [string, string][] = [
      [
        '/vatoms/obj_01J0000000000000000000000?fields=a&x=1',
        '/objects/obj_01J0000000000000000000000?fields=a&x=1',
      ],
      ['/vatoms/', '/objects/'],
      ['/activity/batch', '/ebus/actions/batch'],
      ['/user/profile?org-id=o', '/wallets/me?org-id=o'],
      ['/user/token/refresh/x/y', '/wallets/token/refresh/x/y'],
    ];
    for (const [from, to] of cases) {
      const res = await svc.app.inject({ method: 'GET', url: from });
      expect(res.statusCode, from).toBe(301);
      expect(res.headers.location, from).toBe(to);
    }
  });

  it('answer a v2 request that still sends a credential, v2 or v3, without checking it', async () => {
    beforeSunset();
    for (const headers of [
      { 'app-id': 'a', 'app-secret': 's' },
      { authorization: 'Bearer not.a.token' },
      { 'x-api-key': 'nope' },
    ]) {
      const res = await svc.app.inject({ method: 'GET', url: '/vatoms', headers });
      expect(res.statusCode).toBe(301);
    }
  });

  it('never redirect off the service: the Location is the v3 path, encoded, with no host', async () => {
    beforeSunset();
    const cases: [string, string][] = [
      ['/vatoms//evil.example/x', '/objects//evil.example/x'],
      ['/vatoms?next=https://evil.example/', '/objects?next=https://evil.example/'],
      ['/vatoms/%0d%0aSet-Cookie:%20a=b', '/objects/%0d%0aSet-Cookie:%20a=b'],
      ['/vatoms/caf\u00e9"<x>', '/objects/caf%C3%A9%22%3Cx%3E'],
    ];
    for (const [from, to] of cases) {
      const res = await svc.app.inject({ method: 'GET', url: from });
      expect(res.statusCode, from).toBe(301);
      expect(res.headers.location, from).toBe(to);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });
});

/** The status line and Location of a request sent byte for byte (inject would normalise it). */
async function rawGet(port: number, path: string): Promise<string> {
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
  return answer
    .split('\r\n')
    .filter((l) => /^HTTP\/|^location:/i.test(l))
    .join(' | ');
}

describe('v2 paths over a real connection', () => {
  it('percent-encode what a client could read as the end of the Location or another path', async () => {
    beforeSunset();
    await svc.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = svc.app.server.address() as net.AddressInfo;
    expect(await rawGet(port, '/vatoms/"<x>')).toBe(
      'HTTP/1.1 301 Moved Permanently | location: /objects/%22%3Cx%3E',
    );
    expect(await rawGet(port, '/vatoms/a\\b?q=<y>')).toBe(
      'HTTP/1.1 301 Moved Permanently | location: /objects/a%5Cb?q=%3Cy%3E',
    );
  });
});

describe('v2 paths from the sunset on', () => {
  it('answer 410 with code 5, the v3 path in the message and a successor-version link', async () => {
    afterSunset();
    for (const [v2, v3] of RENAMES) {
      for (const method of ['GET', 'POST', 'DELETE'] as const) {
        const res = await svc.app.inject({ method, url: `${v2}/abc?limit=3` });
        expect(res.statusCode, `${method} ${v2}`).toBe(410);
        const body = res.json<{ code: number; message: string }>();
        expect(Object.keys(body).sort()).toEqual(['code', 'message']);
        expect(body.code).toBe(5);
        expect(body.message).toContain(`${v3}/abc`);
        expect(res.headers.link).toBe(`<${v3}/abc>; rel="successor-version"`);
        expect(res.headers.location).toBeUndefined();
        expect(res.headers['x-request-id']).toMatch(/^req_/);
      }
    }
  });

  it('keep answering 410 long after the sunset', async () => {
    svc.clock.set('2030-01-01T00:00:00Z');
    const res = await svc.app.inject({ method: 'GET', url: '/vatoms' });
    expect(res.statusCode).toBe(410);
    expect(res.json<{ message: string }>().message).toContain('/objects');
  });
});

describe('the v2 layer and the v3 API', () => {
  it('leaves paths outside the rename table to the 404 handler', async () => {
    beforeSunset();
    for (const url of ['/vatomsx', '/user', '/user/token', '/user/profiles', '/VATOMS']) {
      const res = await svc.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json<{ code: number }>().code).toBe(5);
    }
  });

  it('leaves the v3 routes as they were', async () => {
    beforeSunset();
    const anonymous = await svc.app.inject({ method: 'GET', url: '/wallets/me' });
    expect(anonymous.statusCode).toBe(401);
    const me = await svc.app.inject({ method: 'GET', url: '/wallets/me', headers: owner.headers });
    expect(me.statusCode).toBe(200);
  });

  it('keeps the v2 paths out of /openapi.json and the route table', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = Object.keys(res.json<{ paths: Record<string, unknown> }>().paths);
    expect(paths).toContain('/objects');
    for (const [v2] of RENAMES) {
      expect(paths.filter((p) => p.startsWith(v2))).toEqual([]);
      expect(svc.routeTable().filter((r) => r.url.startsWith(v2))).toEqual([]);
    }
  });
});

describe('a configured sunset', () => {
  let later: TestService;
  beforeAll(async () => {
    later = await startTestService({
      env: { V2_SUNSET: '2027-03-01T12:00:00Z', RATE_LIMIT_ENABLED: 'true' },
      now: '2027-03-01T11:59:59Z',
    });
  });
  afterAll(async () => {
    await later.stop();
  });

  it('keeps the redirects until then, and counts them against the anonymous allowance', async () => {
    const res = await later.app.inject({ method: 'GET', url: '/vatoms' });
    expect(res.statusCode).toBe(301);
    expect(res.headers.sunset).toBe('Mon, 01 Mar 2027 12:00:00 GMT');
    expect(res.headers['x-ratelimit-limit']).toBe('6000');
    later.clock.advance(1000);
    const gone = await later.app.inject({ method: 'GET', url: '/vatoms' });
    expect(gone.statusCode).toBe(410);
    expect(gone.headers['x-ratelimit-limit']).toBe('6000');
  });
});

describe('v2 credentials', () => {
  const message = (res: { json: <T>() => T }) => res.json<{ message: string }>().message;

  it('are refused with 401 code 16 naming x-api-key and Authorization: Bearer', async () => {
    for (const headers of [
      { 'app-id': 'app_1', 'app-secret': 'secret' },
      { 'app-id': 'app_1' },
      { 'app-secret': 'secret' },
    ]) {
      const res = await svc.app.inject({ method: 'GET', url: '/objects', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json<{ code: number }>().code).toBe(16);
      expect(message(res)).toContain('x-api-key');
      expect(message(res)).toContain('Authorization: Bearer');
      expect(message(res)).not.toContain('secret.');
    }
  });

  it('are refused on a route where a credential is optional too, rather than ignored', async () => {
    const optional = svc.routeTable().find((r) => r.auth === 'optional' && !r.url.includes(':'));
    expect(optional).toBeDefined();
    const res = await svc.app.inject({
      method: optional!.method as 'GET',
      url: optional!.url,
      headers: { 'app-id': 'a', 'app-secret': 's' },
    });
    expect(res.statusCode).toBe(401);
    expect(message(res)).toContain('x-api-key');
  });

  it('change nothing when a v3 credential is sent beside them', async () => {
    const key = await createApiKey(svc, owner, allPermissions());
    const withKey = await svc.app.inject({
      method: 'GET',
      url: '/objects',
      headers: { ...key.headers, 'app-id': 'a', 'app-secret': 's' },
    });
    expect(withKey.statusCode, withKey.body).toBe(200);
    const withToken = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me',
      headers: { ...owner.headers, 'app-id': 'a' },
    });
    expect(withToken.statusCode).toBe(200);
  });

  it('leave the answer to a request with no credential at all as it was', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/objects' });
    expect(res.statusCode).toBe(401);
    expect(message(res)).toBe('no auth provided');
  });

  it('are ignored by public routes', async () => {
    const res = await svc.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'app-id': 'a', 'app-secret': 's' },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('v2 offset paging', () => {
  interface Operation {
    parameters?: { in: string; name: string }[];
  }

  /** Every GET of the description whose query takes a `next` cursor. */
  async function listPaths(): Promise<string[]> {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    const paths = res.json<{ paths: Record<string, { get?: Operation }> }>().paths;
    return Object.entries(paths)
      .filter(([, ops]) => ops.get?.parameters?.some((p) => p.in === 'query' && p.name === 'next'))
      .map(([path]) => path.replace(/\{[^}]+\}/g, 'x'));
  }

  it('is refused by every list with 400 code 3 on offset, naming limit and next', async () => {
    const lists = await listPaths();
    expect(lists).toEqual(
      expect.arrayContaining(['/objects', '/api-keys', '/organizations/x/members']),
    );
    expect(lists.length).toBeGreaterThan(10);
    for (const path of lists) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `${path}?offset=20&limit=10`,
        headers: owner.headers,
      });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(400);
      const body = res.json<{ code: number; message: string; details: unknown }>();
      expect(body.code).toBe(3);
      expect(body.message).toMatch(/\blimit\b/);
      expect(body.message).toMatch(/\bnext\b/);
      expect(body.details).toEqual({
        fields: [{ field: 'offset', reason: 'is not supported; use limit and next' }],
      });
    }
  });

  it('is refused whatever the offset holds, even empty', async () => {
    for (const q of ['offset=', 'offset=0', 'offset=abc', 'offset=1&offset=2']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/objects?${q}`,
        headers: owner.headers,
      });
      expect(res.statusCode, q).toBe(400);
    }
  });

  it('is checked after the credential: an anonymous call is still 401', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/objects?offset=1' });
    expect(res.statusCode).toBe(401);
  });

  it('leaves lists paged with limit and next, and routes that are no list, as they were', async () => {
    const page = await svc.app.inject({
      method: 'GET',
      url: '/objects?limit=5',
      headers: owner.headers,
    });
    expect(page.statusCode, page.body).toBe(200);
    const me = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me?offset=1',
      headers: owner.headers,
    });
    expect(me.statusCode).toBe(200);
  });
});
