import type { FastifyRequest } from 'fastify';
import { tracing, type SpanHandle, type TraceContext } from '../lib/tracing.js';
import type { App } from './types.js';

/** Probes and scrapes: every few seconds from the orchestrator and Prometheus, never traced. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

interface RequestTrace {
  ctx: TraceContext;
  span: SpanHandle;
}

/**
 * A server span per API request (src/lib/tracing.ts), when tracing is on; with it off this
 * adds no hook at all. The request's context is made active for the hooks from `onRequest`
 * (so the auth hook's statements are the request's) and again from `preHandler` (the body
 * was read in the socket's context), so the handler, the service and its statements run in
 * it. The span is named by the route (`POST /ebus/execute`), never by the raw URL.
 */
export function registerRequestTracing(app: App): void {
  const t = tracing();
  if (!t) return;
  const traces = new WeakMap<FastifyRequest, RequestTrace>();
  app.addHook('onRequest', (req, _reply, done) => {
    const path = req.url.split('?', 1)[0]!;
    if (UNTRACED.has(path)) return done();
    const header = req.headers.traceparent;
    const started = t.startRequest(
      req.method,
      req.routeOptions.url ?? 'unmatched',
      req.id,
      typeof header === 'string' ? header : undefined,
    );
    traces.set(req, started);
    t.within(started.ctx, done);
  });
  app.addHook('preHandler', (req, _reply, done) => {
    const rt = traces.get(req);
    if (rt) t.within(rt.ctx, done);
    else done();
  });
  const end = (req: FastifyRequest, status: number | null) => {
    const rt = traces.get(req);
    if (!rt) return;
    traces.delete(req);
    if (status !== null) rt.span.set({ 'http.response.status_code': status });
    if (status === null) rt.span.end(new Error('request aborted'));
    else rt.span.end(status >= 500 ? new Error(`answered ${status}`) : undefined);
  };
  app.addHook('onResponse', (req, reply, done) => {
    end(req, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    end(req, null);
    done();
  });
}
