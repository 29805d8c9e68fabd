/**
 * OpenTelemetry traces (docs/self-hosting.md, "Traces"): the one face the rest of the code
 * sees. Tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; then `startTracing` loads
 * the SDK (src/lib/otel.ts, a dynamic import, so a process without tracing loads none of it)
 * and `tracing()` answers it. Every call site asks `tracing()` first and does nothing more
 * when it answers null: no span, no context, no extra SQL.
 *
 * A trace: the HTTP request (src/http/tracing.ts) → its SQL statements (src/db/traced-queries.ts)
 * → the group commit its action joined (ebus/group-commit.ts), whose own statements are its
 * children → the webhook deliveries the action caused (webhooks/delivery-runner.ts), which
 * continue the request's trace from the `trace_parent` the outbox row carries, in whichever
 * process sends them.
 */

import type { Tracing, TracingOptions } from './trace-api.js';

export type { SpanHandle, TraceContext, Tracing, TracingOptions } from './trace-api.js';

let active: Tracing | null = null;

/** The tracer when tracing is on, else null (one module variable read). */
export function tracing(): Tracing | null {
  return active;
}

/** Loads the OpenTelemetry SDK and turns tracing on for this process. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const { createOtelTracing } = await import('./otel.js');
  active = createOtelTracing(options);
  return active;
}

/** Sends what is buffered and turns tracing off. */
export async function stopTracing(): Promise<void> {
  const t = active;
  active = null;
  await t?.shutdown();
}
