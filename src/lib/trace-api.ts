/**
 * What a tracer offers (src/lib/tracing.ts turns one on; src/lib/otel.ts is the one there
 * is), in a file of its own so that the SDK side and the switch do not import each other.
 */

/** An opaque trace context (OpenTelemetry's `Context`): what was active at some point. */
export type TraceContext = object;

/** A span in progress, as the call sites see it. */
export interface SpanHandle {
  /** Adds attributes (strings and numbers; never a secret, never a parameter value). */
  set(attributes: Record<string, string | number | boolean>): void;
  /** Ends it; with an error, marks it failed (the error's name and message only). */
  end(error?: unknown): void;
}

export interface Tracing {
  /** The context active now (to carry a request's context to where its action is applied). */
  current(): TraceContext;
  /** Runs `fn` with `ctx` active: what it calls, awaits included, sees it. */
  within<T>(ctx: TraceContext, fn: () => T): T;
  /**
   * Starts an HTTP request's server span, continuing `traceparent` when the client sent a
   * well-formed one; answers the context holding it.
   */
  startRequest(
    method: string,
    /** The route's pattern (`/objects/:id`), never the raw URL. */
    route: string,
    requestId: string,
    traceparent: string | undefined,
  ): { ctx: TraceContext; span: SpanHandle };
  /** A database statement's span, a child of the active span; null outside any trace. */
  startQuery(text: string, name: string | undefined): SpanHandle | null;
  /**
   * Runs one group commit in a span of its own: the child of the first action's context,
   * linked to the others'. Inside it `traceparentOf(hash)` answers each action's context as
   * a W3C traceparent (for the outbox rows), by the action's hash.
   */
  group<T>(
    actions: readonly { hash: string; ctx: TraceContext | null }[],
    fn: () => Promise<T>,
  ): Promise<T>;
  /**
   * Inside `group`: the traceparent of the context the action came with (sampled or not:
   * what continues it decides the same way from its trace id), else null.
   */
  traceparentOf(actionHash: string): string | null;
  /** A webhook delivery attempt's span, continuing the trace the outbox row names. */
  startDelivery(
    traceparent: string | null,
    attributes: Record<string, string | number>,
  ): SpanHandle;
  /** Sends every span ended so far and waits until each export (the timer's too) is answered. */
  flush(): Promise<void>;
  /** Sends the spans still buffered and stops (shutdown). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP/HTTP base URL; spans go to `<endpoint>/v1/traces` as JSON. */
  endpoint: string;
  /** Sent with every export (OTEL_EXPORTER_OTLP_HEADERS; may hold a key). */
  exporterHeaders: Record<string, string>;
  serviceName: string;
  /** Share of new traces recorded (0–1), decided from the trace id. */
  sampleRatio: number;
  /** Spans are buffered and sent this often (ms). */
  exportDelayMs?: number;
  /** The process's role, recorded on every span's resource. */
  role: string;
}

const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C traceparent's parts, or null when it is not a well-formed version-00 one. */
export function parseTraceparent(
  value: string | null | undefined,
): { traceId: string; spanId: string; flags: number } | null {
  if (typeof value !== 'string' || value.length !== 55) return null;
  const m = TRACEPARENT_RE.exec(value);
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return null;
  return { traceId: m[1]!, spanId: m[2]!, flags: parseInt(m[3]!, 16) };
}
