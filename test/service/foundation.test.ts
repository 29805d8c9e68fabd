import { describe, expect, it } from 'vitest';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Type } from 'typebox';
import { authOf } from '../../src/http/auth.js';
import type { App } from '../../src/http/app.js';
import { useTestService } from '../helpers/harness.js';
import { createMember } from '../helpers/fixtures.js';

function testRoutes(app: App) {
  app.get('/test/protected', { config: { permission: 'organizations.read' } }, async (req) => {
    const auth = authOf(req);
    return { wallet: auth.walletId, org: auth.orgId };
  });
  app.post(
    '/test/echo',
    {
      config: { permission: 'templates.create' },
      schema: { body: Type.Object({ name: Type.String() }, { additionalProperties: false }) },
    },
    async (req) => req.body,
  );
  app.get('/test/boom', { config: { auth: 'none' } }, async () => {
    throw new Error('secret internal detail');
  });
  app.get('/test/log-headers', { config: { permission: 'authenticated' } }, async (req) => {
    req.log.info({ headers: req.headers, password: 'hunter2' }, 'logging headers on purpose');
    return {};
  });
}
const svc = useTestService({ extraRoutes: testRoutes });

describe('health', () => {
  it('answers healthz and readyz', async () => {
    const h = await svc.app.inject({ method: 'GET', url: '/healthz' });
    expect(h.statusCode).toBe(200);
    expect(h.json()).toEqual({ status: 'ok' });
    const r = await svc.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).toBe(200);
  });
});

describe('openapi', () => {
  it('serves a valid OpenAPI 3.1 document with both security schemes', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes['x-api-key']).toMatchObject({
      type: 'apiKey',
      in: 'header',
    });
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  it('serves a reference page at /docs', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});

describe('conventions', () => {
  it('answers an unknown route with 404 code 5 and a request id', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/no/such/route' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 5 });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('echoes a well-formed incoming request id and replaces a malformed one', async () => {
    const ok = await svc.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'abc-123.x_Y' },
    });
    expect(ok.headers['x-request-id']).toBe('abc-123.x_Y');
    const bad = await svc.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'bad id!' },
    });
    expect(bad.headers['x-request-id']).toMatch(/^req_/);
  });

  it('refuses a protected route without credentials with 401 code 16', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/test/protected' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 16, message: 'no auth provided' });
  });

  it('refuses a malformed credential with 401 code 16', async () => {
    for (const headers of [{ authorization: 'Basic abc' }, { authorization: 'Bearer not-a-jwt' }]) {
      const res = await svc.app.inject({ method: 'GET', url: '/test/protected', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe(16);
    }
  });

  it('accepts a valid bearer token', async () => {
    const m = await createMember(svc, { role: 'viewer' });
    const res = await svc.app.inject({ method: 'GET', url: '/test/protected', headers: m.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ wallet: m.walletId, org: m.orgId });
  });

  it('refuses a caller without the declared permission with 403 code 7', async () => {
    const m = await createMember(svc, { role: 'viewer' });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: m.headers,
      payload: { name: 'x' },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });

  it('maps schema failures to 400 code 3 with the fields', async () => {
    const m = await createMember(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: m.headers,
      payload: { name: 5, extra: 1 },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe(3);
    expect(body.details.fields[0].field).toBeTruthy();
  });

  it('refuses a number where a body expects a string instead of converting it', async () => {
    const m = await createMember(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: m.headers,
      payload: { name: 5 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.fields[0]).toEqual({ field: 'name', reason: 'must be string' });
    const ok = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: m.headers,
      payload: { name: '5' },
    });
    expect(ok.json()).toEqual({ name: '5' });
  });

  it('maps malformed JSON to 400 code 3', async () => {
    const m = await createMember(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(3);
  });

  it('maps an oversize body to 413 code 3', async () => {
    const m = await createMember(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe(3);
  });

  it('hides unexpected errors behind 500 code 13 and logs the real one', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/test/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ code: 13, message: 'internal error' });
    expect(JSON.stringify(svc.logs)).toContain('secret internal detail');
  });
});

describe('observability', () => {
  it('redacts credentials and secrets in the log', async () => {
    const m = await createMember(svc);
    await svc.app.inject({
      method: 'GET',
      url: '/test/log-headers?token=abc123secret',
      headers: { ...m.headers, 'x-api-key': 'onsk_verysecretkey' },
    });
    const text = JSON.stringify(svc.logs);
    expect(text).not.toContain(m.accessToken);
    expect(text).not.toContain('onsk_verysecretkey');
    expect(text).not.toContain('abc123secret');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('[Redacted]');
  });

  it('serves Prometheus metrics with request counts and pool use', async () => {
    await svc.app.inject({ method: 'GET', url: '/healthz' });
    const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('http_requests_total{method="GET",route="/healthz",status="200"}');
    expect(res.body).toContain('http_request_duration_seconds_bucket');
    expect(res.body).toContain('db_pool_connections{state="total"}');
  });
});
