import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, ids as hex, attributes as a record. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  links: { traceId: string; spanId: string }[];
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

export interface Collector {
  url: string;
  spans: OtlpSpan[];
  headers: IncomingHttpHeaders[];
  resources: Record<string, unknown>[];
  close(): Promise<void>;
}

/** OTLP/JSON writes ids as hex; base64 is read too, should an exporter send that. */
const hexId = (id: unknown): string => {
  if (typeof id !== 'string' || id === '') return '';
  return /^[0-9a-f]+$/.test(id) && (id.length === 32 || id.length === 16)
    ? id
    : Buffer.from(id, 'base64').toString('hex');
};

type OtlpAttribute = { key: string; value: Record<string, unknown> };
const attributesOf = (list: OtlpAttribute[] | undefined) =>
  Object.fromEntries(
    (list ?? []).map((a) => [
      a.key,
      a.value.stringValue ?? a.value.intValue ?? a.value.boolValue ?? a.value.doubleValue,
    ]),
  );

/**
 * A minimal OTLP/HTTP collector: takes JSON exports at /v1/traces and keeps their spans.
 * With `holdMs`, each export is kept and answered only that long after it arrived (a slow
 * collector, so an export can be caught in flight).
 */
export async function startCollector(options: { holdMs?: number } = {}): Promise<Collector> {
  const c: Collector = {
    url: '',
    spans: [],
    headers: [],
    resources: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => setTimeout(take, options.holdMs ?? 0));
    const take = () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      c.headers.push(req.headers);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: OtlpAttribute[] };
          scopeSpans: {
            spans: (Omit<OtlpSpan, 'attributes' | 'links'> & {
              attributes?: OtlpAttribute[];
              links?: { traceId: string; spanId: string }[];
            })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        c.resources.push(attributesOf(rs.resource.attributes));
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            c.spans.push({
              ...s,
              traceId: hexId(s.traceId),
              spanId: hexId(s.spanId),
              parentSpanId: hexId(s.parentSpanId),
              links: (s.links ?? []).map((l) => ({
                traceId: hexId(l.traceId),
                spanId: hexId(l.spanId),
              })),
              attributes: attributesOf(s.attributes),
              status: s.status ?? {},
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return c;
}
