import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, stopTracing, tracing } from '../../src/lib/tracing.js';
import { signEoa, type EoaSigner } from '../helpers/ebus.js';
import { startCollector, type Collector, type OtlpSpan } from '../helpers/otlp-collector.js';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  makeTestCa,
  startReceiver,
  type Receiver,
  type TestCa,
} from '../helpers/webhook-receiver.js';
import { createWebhook, headersNow, signerWithTemplate } from '../helpers/webhooks.js';

/**
 * Issue 31 item 6: with OTEL_EXPORTER_OTLP_ENDPOINT set, one execute request, its SQL
 * statements, the group commit its action joined and the webhook delivery it caused are one
 * trace, exported over OTLP/HTTP (JSON) to a collector run here on loopback; the delivery
 * continues the trace from the outbox row, or from the hand-off when this process's worker
 * sends it at once.
 */

let collector: Collector;
let ca: TestCa;
let svc: TestService;
const receivers: Receiver[] = [];

beforeAll(async () => {
  collector = await startCollector();
  // On before the service opens its pool: statements are traced only then.
  await startTracing({
    endpoint: `${collector.url}/`,
    exporterHeaders: { 'x-collector-key': 'collector-test-key' },
    serviceName: 'ons-test',
    sampleRatio: 1,
    exportDelayMs: 50,
    role: 'all',
  });
  ca = await makeTestCa();
  svc = await startTestService({
    // Actions sent together wait for each other, so two requests share one group commit.
    env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CA_FILE: ca.caFile, EBUS_GROUP_WAIT_MS: '150' },
  });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await svc.stop();
  await stopTracing();
  await collector.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver(ca);
  receivers.push(r);
  return r;
}

/** The spans of one trace, once every export so far has arrived. */
async function spansOf(traceId: string): Promise<OtlpSpan[]> {
  await tracing()!.flush();
  return collector.spans.filter((s) => s.traceId === traceId);
}

/** A mint signed by `signer`, sent to POST /ebus/execute with these extra headers. */
async function executeMint(
  signer: EoaSigner,
  templateId: string,
  nonce: number,
  headers: Record<string, string> = {},
) {
  const body = await signEoa(svc, signer, {
    name: 'mint',
    params: { template_id: templateId },
    nonce,
  });
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: { ...(await headersNow(svc, signer)), ...headers },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return { res, action: res.json<{ action: { id: string } }>().action };
}

const SERVER = 2;
const CLIENT = 3;

describe('one execute request', () => {
  it('is one trace: request → its SQL → the group commit → its SQL; the delivery continues it from the outbox row', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    // The client's trace is continued.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const { action } = await executeMint(signer, templateId, 0, {
      traceparent: `00-${traceId}-${clientSpan}-01`,
    });

    // The row names the request's trace (the worker is not running: the row waits).
    const { rows } = await svc.container.db.execute<{ trace_parent: string | null }>(
      sql`SELECT trace_parent FROM webhook_deliveries WHERE action_id = ${action.id}`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.trace_parent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // Sent later by the delivery loop, which reads the trace from the row it claims.
    await svc.container.webhookWorker.runOnce();
    expect(r.received).toHaveLength(1);

    const spans = await spansOf(traceId);
    const request = spans.find((s) => s.name === 'POST /ebus/execute');
    expect(request, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(request!.parentSpanId).toBe(clientSpan);
    expect(request!.kind).toBe(SERVER);
    expect(request!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/ebus/execute',
      'http.response.status_code': 200,
    });
    expect(rows[0]!.trace_parent).toBe(`00-${traceId}-${request!.spanId}-01`);

    const childrenOf = (parent: OtlpSpan) => spans.filter((s) => s.parentSpanId === parent.spanId);
    // The request's own statements (the signer's wallet, its credentials …).
    const requestSql = childrenOf(request!).filter((s) => s.name.startsWith('pg '));
    expect(requestSql.length).toBeGreaterThan(0);
    for (const s of requestSql) {
      expect(s.kind).toBe(CLIENT);
      expect(s.attributes['db.system.name']).toBe('postgresql');
      expect(typeof s.attributes['db.query.text']).toBe('string');
    }
    // The group commit its action joined, and the group's statement under it.
    const groups = childrenOf(request!).filter((s) => s.name === 'ebus group commit');
    expect(groups).toHaveLength(1);
    expect(groups[0]!.attributes['ons.group.actions']).toBe(1);
    const groupSql = childrenOf(groups[0]!).filter((s) => s.name.startsWith('pg '));
    expect(groupSql.length).toBeGreaterThan(0);
    expect(
      // The group statement (its text cut at 2,000 characters), a named prepared statement.
      groupSql.some(
        (s) =>
          String(s.attributes['db.query.text']).includes('INSERT INTO objects') &&
          String(s.attributes['db.query.summary']).startsWith('p_'),
      ),
    ).toBe(true);
    // The delivery: the same trace, under the request that caused it.
    const deliveries = spans.filter((s) => s.name === 'webhook delivery');
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.parentSpanId).toBe(request!.spanId);
    expect(deliveries[0]!.kind).toBe(CLIENT);
    expect(deliveries[0]!.attributes).toMatchObject({
      'ons.delivery.status': 'done',
      'ons.delivery.attempt': 1,
      'http.response.status_code': 200,
    });
    // Every span of the trace hangs from the request (or the client's span above it).
    const ids = new Set(spans.map((s) => s.spanId));
    for (const s of spans) expect(s === request || ids.has(s.parentSpanId)).toBe(true);

    // Exported with the configured headers and resource.
    expect(collector.headers.at(-1)!['x-collector-key']).toBe('collector-test-key');
    expect(collector.resources.at(-1)).toMatchObject({
      'service.name': 'ons-test',
      'ons.role': 'all',
    });
  });

  it('sent at once by this process worker (the hand-off) continues the same trace', async () => {
    const { signer, templateId } = await signerWithTemplate(svc);
    const r = await receiver();
    await createWebhook(svc, signer, r.url, [{ template_id: templateId }]);
    svc.container.webhookWorker.start();
    try {
      const { res } = await executeMint(signer, templateId, 0);
      for (let i = 0; i < 200 && r.received.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(r.received).toHaveLength(1);
      // The request's trace (no traceparent sent: a new one), found by its request id.
      await tracing()!.flush();
      const request = collector.spans.find(
        (s) => s.attributes['ons.request_id'] === res.headers['x-request-id'],
      );
      expect(request).toBeDefined();
      let spans: OtlpSpan[] = [];
      for (let i = 0; i < 100; i++) {
        spans = await spansOf(request!.traceId);
        if (spans.some((s) => s.name === 'webhook delivery')) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const delivery = spans.find((s) => s.name === 'webhook delivery');
      expect(delivery?.parentSpanId).toBe(request!.spanId);
      expect(request!.parentSpanId).toBe('');
    } finally {
      await svc.container.webhookWorker.stop();
    }
  });
});

describe('two requests in one group commit', () => {
  it('the group is in the first trace and links to the other; each delivery continues its own request', async () => {
    const a = await signerWithTemplate(svc);
    const b = await signerWithTemplate(svc);
    const r = await receiver();
    await createWebhook(svc, a.signer, r.url, [{ template_id: a.templateId }]);
    await createWebhook(svc, b.signer, r.url, [{ template_id: b.templateId }]);
    const traceA = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1';
    const traceB = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
    const parent = (t: string) => ({ traceparent: `00-${t}-00f067aa0ba902b7-01` });
    const [sentA, sentB] = await Promise.all([
      executeMint(a.signer, a.templateId, 0, parent(traceA)),
      executeMint(b.signer, b.templateId, 0, parent(traceB)),
    ]);
    await svc.container.webhookWorker.runOnce();
    expect(r.received).toHaveLength(2);

    const spansA = await spansOf(traceA);
    const spansB = await spansOf(traceB);
    const requestA = spansA.find((s) => s.name === 'POST /ebus/execute')!;
    const requestB = spansB.find((s) => s.name === 'POST /ebus/execute')!;
    const groups = [...spansA, ...spansB].filter((s) => s.name === 'ebus group commit');
    expect(groups).toHaveLength(1);
    const group = groups[0]!;
    expect(group.attributes['ons.group.actions']).toBe(2);
    // Under whichever request's action came first, linked to the other's.
    const [first, other] = group.traceId === traceA ? [requestA, requestB] : [requestB, requestA];
    expect(group.parentSpanId).toBe(first.spanId);
    expect(group.links).toEqual([{ traceId: other.traceId, spanId: other.spanId }]);
    // Each delivery under its own request, whichever trace the group was in.
    for (const [spans, request, sent] of [
      [spansA, requestA, sentA],
      [spansB, requestB, sentB],
    ] as const) {
      const delivery = spans.filter((s) => s.name === 'webhook delivery');
      expect(delivery).toHaveLength(1);
      expect(delivery[0]!.parentSpanId).toBe(request.spanId);
      const { rows } = await svc.container.db.execute<{ trace_parent: string }>(
        sql`SELECT trace_parent FROM webhook_deliveries WHERE action_id = ${sent.action.id}`,
      );
      expect(rows[0]!.trace_parent).toBe(`00-${request.traceId}-${request.spanId}-01`);
    }
  });
});

describe('what is not traced', () => {
  it('a malformed traceparent starts a new trace; probes and scrapes make no span; no statement outside a trace', async () => {
    const bad = `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`;
    const res = await svc.app.inject({
      method: 'GET',
      url: '/public/network',
      headers: { traceparent: bad },
    });
    expect(res.statusCode).toBe(200);
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      expect((await svc.app.inject({ method: 'GET', url })).statusCode).toBe(200);
    }
    // The delivery loop's claim, with nothing due: a statement in no trace.
    await svc.container.webhookWorker.runOnce();
    await tracing()!.flush();
    const request = collector.spans.find(
      (s) => s.attributes['ons.request_id'] === res.headers['x-request-id'],
    );
    expect(request?.name).toBe('GET /public/network');
    expect(request!.parentSpanId).toBe('');
    expect(request!.traceId).not.toBe('0'.repeat(32));
    const names = collector.spans.map((s) => s.name);
    for (const probe of ['GET /healthz', 'GET /readyz', 'GET /metrics']) {
      expect(names).not.toContain(probe);
    }
    // Every statement span has a parent: none is a trace of its own.
    for (const s of collector.spans.filter((x) => x.name.startsWith('pg '))) {
      expect(s.parentSpanId).not.toBe('');
    }
  });
});
