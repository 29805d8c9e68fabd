import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  createContextKey,
  trace,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  parseTraceparent,
  type SpanHandle,
  type Tracing,
  type TracingOptions,
} from './trace-api.js';

/** The longest statement text a span carries (the group statement is far longer). */
const MAX_QUERY_TEXT = 2000;

/** The actions of the group running in this context: hash → their traceparent. */
const GROUP_ACTIONS = createContextKey('ons.group.actions');

function handle(span: Span): SpanHandle {
  return {
    set: (attributes) => void span.setAttributes(attributes),
    end(error) {
      if (error !== undefined) {
        // A database error by its SQLSTATE only: its message may quote a value (as the log
        // does, src/http/logger.ts); other errors by name and message.
        const code: unknown =
          error !== null && typeof error === 'object' && 'code' in error ? error.code : undefined;
        const message =
          typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
            ? `SQLSTATE ${code}`
            : error instanceof Error
              ? `${error.name}: ${error.message}`
              : 'failed';
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      }
      span.end();
    },
  };
}

/**
 * The span's context as a W3C traceparent, or null outside any trace. An unsampled one is
 * kept too (flags 00): what continues it decides from the same trace id, so the same way.
 */
function traceparentOf(ctx: Context): string | null {
  const sc = trace.getSpanContext(ctx);
  if (!sc) return null;
  const flags = sc.traceFlags & TraceFlags.SAMPLED ? '01' : '00';
  return `00-${sc.traceId}-${sc.spanId}-${flags}`;
}

/** A context continuing a traceparent (from a client or an outbox row). */
function remoteContext(traceparent: string | null | undefined): Context {
  const p = parseTraceparent(traceparent);
  if (!p) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: p.traceId,
    spanId: p.spanId,
    traceFlags: p.flags & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/** The first word of a statement, upper case: SELECT, INSERT, WITH … */
function verbOf(text: string): string {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
}

/**
 * The tracer (src/lib/tracing.ts says where spans come from). Nothing is registered
 * globally: the provider, the tracer and the context storage are this object's own, so
 * nothing else in the process (a library with its own instrumentation) changes.
 *
 * Sampling: a new trace is recorded with `sampleRatio`, decided from its trace id; a
 * client's `traceparent` is continued (its trace id kept) but its sampled flag does not
 * decide — the same ratio does — so a client cannot make every one of its requests
 * recorded. Spans whose parent is local follow the parent.
 */
export function createOtelTracing(options: TracingOptions): Tracing {
  const ratio = new TraceIdRatioBasedSampler(options.sampleRatio);
  const exporter = new OTLPTraceExporter({
    url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces`,
    headers: options.exporterHeaders,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName,
      'ons.role': options.role,
    }),
    sampler: new ParentBasedSampler({
      root: ratio,
      remoteParentSampled: ratio,
      remoteParentNotSampled: ratio,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: options.exportDelayMs ?? 5000,
      }),
    ],
  });
  const tracer = provider.getTracer('ons');
  const storage = new AsyncLocalStorage<Context>();
  const current = (): Context => storage.getStore() ?? ROOT_CONTEXT;

  return {
    current,
    within: (ctx, fn) => storage.run(ctx as Context, fn),

    startRequest(method, route, requestId, traceparent) {
      const span = tracer.startSpan(
        `${method} ${route}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': method,
            'http.route': route,
            'ons.request_id': requestId,
          },
        },
        remoteContext(traceparent),
      );
      return { ctx: trace.setSpan(ROOT_CONTEXT, span), span: handle(span) };
    },

    startQuery(text, name) {
      const parent = current();
      // Statements outside any trace (the background loops' polling) make no trace of their own.
      if (!trace.getSpan(parent)?.isRecording()) return null;
      const verb = verbOf(text);
      const attributes: Record<string, string> = {
        'db.system.name': 'postgresql',
        'db.operation.name': verb,
        'db.query.text': text.length > MAX_QUERY_TEXT ? `${text.slice(0, MAX_QUERY_TEXT)}…` : text,
      };
      if (name !== undefined) attributes['db.query.summary'] = name;
      return handle(tracer.startSpan(`pg ${verb}`, { kind: SpanKind.CLIENT, attributes }, parent));
    },

    async group(actions, fn) {
      const contexts = actions.map((a) => (a.ctx as Context | null) ?? ROOT_CONTEXT);
      const parent = contexts[0] ?? ROOT_CONTEXT;
      const links: Link[] = [];
      const seen = new Set<string>();
      for (const ctx of contexts.slice(1)) {
        const sc = trace.getSpanContext(ctx);
        if (!sc || seen.has(sc.spanId) || sc.spanId === trace.getSpanContext(parent)?.spanId) {
          continue;
        }
        seen.add(sc.spanId);
        links.push({ context: sc });
      }
      const span = tracer.startSpan(
        'ebus group commit',
        { attributes: { 'ons.group.actions': actions.length }, links },
        parent,
      );
      const byHash = new Map<string, string | null>();
      actions.forEach((a, i) => byHash.set(a.hash, traceparentOf(contexts[i]!)));
      const ctx = trace.setSpan(parent, span).setValue(GROUP_ACTIONS, byHash);
      try {
        const out = await storage.run(ctx, fn);
        span.end();
        return out;
      } catch (err) {
        handle(span).end(err);
        throw err;
      }
    },

    traceparentOf(actionHash) {
      const byHash = current().getValue(GROUP_ACTIONS) as Map<string, string | null> | undefined;
      return byHash?.get(actionHash) ?? null;
    },

    startDelivery(traceparent, attributes) {
      return handle(
        tracer.startSpan(
          'webhook delivery',
          { kind: SpanKind.CLIENT, attributes },
          remoteContext(traceparent),
        ),
      );
    },

    // The processor's flush sends what is buffered but does not wait for an export its
    // timer already started; the exporter's waits for every send still in flight.
    flush: async () => {
      await provider.forceFlush();
      await exporter.forceFlush();
    },
    shutdown: () => provider.shutdown(),
  };
}
