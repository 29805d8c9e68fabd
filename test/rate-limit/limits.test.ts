import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { startTestService, type TestService } from '../helpers/service.js';

const svc = useTestService({
  env: { RATE_LIMIT_ENABLED: 'true' },
  extraRoutes: (app) => {
    app.post(
      '/test/upload-like',
      { config: { permission: 'authenticated', rateLimit: 'upload' } },
      async () => ({}),
    );
  },
});

describe('rate limits', () => {
  it('puts the X-RateLimit headers on responses', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.headers['x-ratelimit-limit']).toBe('6000');
    expect(Number(res.headers['x-ratelimit-remaining'])).toBeLessThan(6000);
    // The limiter reads the service's clock (fake here, standing still unless a test moves it).
    const nowSec = svc.clock.now().getTime() / 1000;
    expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(nowSec);
  });

  it('puts the headers on answers given before the caller is known', async () => {
    for (const res of [
      await svc.app.inject({ method: 'GET', url: '/no/such/route' }),
      await svc.app.inject({ method: 'GET', url: '/wallets/me' }),
      await svc.app.inject({
        method: 'GET',
        url: '/wallets/me',
        headers: { authorization: 'Bearer not.a.token' },
      }),
    ]) {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-ratelimit-limit']).toBe('6000');
      expect(res.headers['x-ratelimit-remaining']).toBeDefined();
    }
  });

  it('refuses past the burst with 429 code 8 and Retry-After, per caller', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc);
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 8; i++) {
      last = await svc.app.inject({ method: 'POST', url: '/test/upload-like', headers: a.headers });
      statuses.push(last.statusCode);
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses).toContain(429);
    const refused = await svc.app.inject({
      method: 'POST',
      url: '/test/upload-like',
      headers: a.headers,
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe(8);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-limit']).toBe('30');
    // Another caller has its own allowance.
    const other = await svc.app.inject({
      method: 'POST',
      url: '/test/upload-like',
      headers: b.headers,
    });
    expect(other.statusCode).toBe(200);
  });

  it('counts webhook management per organization: its second caller shares the first one’s allowance', async () => {
    const a = await createMember(svc);
    const sameOrg = await createMember(svc, { orgId: a.orgId });
    const otherOrg = await createMember(svc);
    // Refused by validation, but counted first: the allowance is spent on arrival.
    const save = (m: typeof a) =>
      svc.app.inject({ method: 'POST', url: '/webhooks', headers: m.headers, payload: {} });
    const statuses: number[] = [];
    while (!statuses.includes(429) && statuses.length < 8)
      statuses.push((await save(a)).statusCode);
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThanOrEqual(5);
    expect(statuses).toContain(429);
    const refused = await save(sameOrg);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().code).toBe(8);
    expect(refused.headers['x-ratelimit-limit']).toBe('30');
    expect((await save(otherOrg)).statusCode).toBe(400);
  });

  it('never counts or refuses the health routes; /metrics counts against the anonymous limit', async () => {
    const tight = await startTestService({
      env: {
        RATE_LIMIT_ENABLED: 'true',
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3',
        RATE_LIMIT_ANONYMOUS_PER_SECOND: '3',
      },
    });
    try {
      const scrapes = [];
      for (let i = 0; i < 4; i++)
        scrapes.push(await tight.app.inject({ method: 'GET', url: '/metrics' }));
      expect(scrapes.map((r) => r.statusCode)).toEqual([200, 200, 200, 429]);
      expect(scrapes[0]!.headers['x-ratelimit-limit']).toBe('3');
      // The address is past its limit, and the probes still answer, without counting.
      for (let i = 0; i < 10; i++) {
        for (const url of ['/healthz', '/readyz']) {
          const res = await tight.app.inject({ method: 'GET', url });
          expect(res.statusCode).toBe(200);
          expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        }
      }
      const other = await tight.app.inject({ method: 'GET', url: '/openapi.json' });
      expect(other.statusCode).toBe(429);
    } finally {
      await tight.stop();
    }
  });

  it('renders /metrics at most once a second, sharing the text with every caller in it', async () => {
    const first = await svc.app.inject({ method: 'GET', url: '/metrics' });
    await svc.app.inject({ method: 'GET', url: '/no/such/route' });
    const second = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(second.body).toBe(first.body);
    await new Promise((r) => setTimeout(r, 1100));
    const third = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(third.body).not.toBe(first.body);
    expect(third.body).toContain('route="unmatched",status="404"');
  });

  // Routes anyone may call whose answer can cost much more than a read have a group of their
  // own, far below the anonymous allowance (docs/api.md, "Rate limits"): each row's route
  // answers its group's burst from one address, then 429, while that address's other calls
  // and another address's calls of the route are still answered.
  describe('groups of routes without a credential', () => {
    const BATCH = 'bat_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    type Row = { method: 'GET' | 'POST'; url: string; limit: string; burst: number };
    const groups: Record<string, Row> = {
      'batch content': {
        method: 'GET',
        url: `/batches/${BATCH}/content`,
        limit: '600',
        burst: 10,
      },
      // An empty body is refused (400) after the limit counts it: no password is hashed here.
      'wallet sign-up': { method: 'POST', url: '/organizations/wallets', limit: '30', burst: 5 },
      'a wallet in an organization': { method: 'POST', url: '/wallets', limit: '30', burst: 5 },
    };
    let n = 0;
    for (const [name, g] of Object.entries(groups)) {
      it(`${name}: ${g.burst} calls a second from an address, then 429 code 8`, async () => {
        n += 1;
        const remoteAddress = `192.0.2.${n}`;
        const send = (url: string, addr = remoteAddress, method: Row['method'] = g.method) =>
          svc.app.inject({
            method,
            url,
            remoteAddress: addr,
            ...(method === 'POST' ? { payload: {} } : {}),
          });
        for (let i = 0; i < g.burst; i++) {
          const res = await send(g.url);
          expect(res.statusCode).not.toBe(429);
          expect(res.headers['x-ratelimit-limit']).toBe(g.limit);
        }
        const refused = await send(g.url);
        expect(refused.statusCode).toBe(429);
        expect(refused.json()).toMatchObject({ code: 8 });
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(refused.headers['x-ratelimit-limit']).toBe(g.limit);
        // The address's other calls have the anonymous allowance; another address its own.
        const other = await send(`/batches/${BATCH}`, remoteAddress, 'GET');
        expect(other.statusCode).not.toBe(429);
        expect(other.headers['x-ratelimit-limit']).toBe('6000');
        expect((await send(g.url, `198.18.0.${n}`)).statusCode).not.toBe(429);
      });
    }
  });

  // Issue 27 item 8: a request refused for its credential is anonymous traffic of its
  // client address, refused 429 past the anonymous limit like any other.
  describe('bad-credential floods from one address', () => {
    let tight: TestService;
    beforeAll(async () => {
      tight = await startTestService({
        env: {
          RATE_LIMIT_ENABLED: 'true',
          RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3',
          RATE_LIMIT_ANONYMOUS_PER_SECOND: '3',
        },
      });
    });
    afterAll(async () => {
      await tight.stop();
    });

    // Every way the credential check refuses (src/http/auth.ts), each one request.
    const refusals: Record<string, { url: string; headers: Record<string, string> }> = {
      'no credential': { url: '/wallets/me', headers: {} },
      'a malformed Authorization header': {
        url: '/wallets/me',
        headers: { authorization: 'Basic dXNlcjpwYXNz' },
      },
      'a bearer token that does not verify': {
        url: '/wallets/me',
        headers: { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
      },
      'an API key that does not exist': {
        url: '/wallets/me',
        headers: { 'x-api-key': 'onsk_live_0000000000000000000000000000000000000000' },
      },
      'v2 app credentials': { url: '/wallets/me', headers: { 'app-id': 'a', 'app-secret': 'b' } },
      'an API key on a route for signed-in people': {
        url: '/api-keys',
        headers: { 'x-api-key': 'onsk_live_0000000000000000000000000000000000000000' },
      },
    };
    let n = 0;
    for (const [name, req] of Object.entries(refusals)) {
      it(`answers 401 three times, then 429 code 8: ${name}`, async () => {
        n += 1;
        const remoteAddress = `198.51.100.${n}`;
        const send = (addr = remoteAddress) =>
          tight.app.inject({
            method: 'GET',
            url: req.url,
            headers: req.headers,
            remoteAddress: addr,
          });
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await send()).statusCode);
        expect(statuses).toEqual([401, 401, 401]);
        const limited = await send();
        expect(limited.statusCode).toBe(429);
        expect(limited.json()).toMatchObject({ code: 8 });
        expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(limited.headers['x-ratelimit-limit']).toBe('3');
        expect(limited.headers['x-ratelimit-remaining']).toBe('0');
        // Another address is still answered; a valid credential from this one too.
        expect((await send(`203.0.113.${n}`)).statusCode).toBe(401);
        const member = await createMember(tight);
        const ok = await tight.app.inject({
          method: 'GET',
          url: '/wallets/me',
          headers: member.headers,
          remoteAddress,
        });
        expect(ok.statusCode).toBe(200);
      });
    }
  });
});
