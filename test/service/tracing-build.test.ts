import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../helpers/db.js';
import { startCollector, type Collector } from '../helpers/otlp-collector.js';
import { sleep, startServiceProcess } from '../helpers/processes.js';

/**
 * Issue 31 item 6, as operators run it: the built service (dist/, plain node) loads no
 * OpenTelemetry module unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and with it set exports
 * its spans to the collector. A module hook records every @opentelemetry module the process
 * resolves, so the first case is seen, not assumed.
 */
let dir: string;
let collector: Collector;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-otel-'));
  await writeFile(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes('/@opentelemetry/')) appendFileSync(process.env.ONS_TEST_LOADED, r.url + '\\n');
  return r;
}
`,
  );
  await writeFile(
    path.join(dir, 'register.mjs'),
    `import { register } from 'node:module';
register(${JSON.stringify(path.join(dir, 'hooks.mjs'))}, import.meta.url);
`,
  );
  collector = await startCollector();
});
afterAll(async () => {
  await collector.close();
});

/** The built service with the hook; answers the @opentelemetry modules it resolved. */
async function run(name: string, env: Record<string, string>) {
  const loaded = path.join(dir, `${name}.txt`);
  await writeFile(loaded, '');
  const svc = await startServiceProcess({
    DATABASE_URL: await freshDatabaseUrl(),
    NODE_OPTIONS: `--import ${path.join(dir, 'register.mjs')}`,
    ONS_TEST_LOADED: loaded,
    LOG_LEVEL: 'info',
    ...env,
  });
  try {
    const res = await fetch(`${svc.url}/batches`, {
      headers: { 'x-request-id': `req-${name}` },
    });
    expect(res.status).toBe(200);
  } finally {
    await svc.stop();
  }
  return { modules: (await readFile(loaded, 'utf8')).split('\n').filter(Boolean), svc };
}

describe('the built service', () => {
  it('without OTEL_EXPORTER_OTLP_ENDPOINT loads no OpenTelemetry module and sends nothing', async () => {
    const { modules } = await run('off', {});
    expect(modules).toEqual([]);
    await sleep(100);
    expect(collector.spans).toHaveLength(0);
  });

  it('with it, loads the SDK and exports the request with its statements (flushed on SIGTERM)', async () => {
    const { modules, svc } = await run('on', {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'ons-built',
    });
    expect(modules.some((m) => m.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
    const started = svc.lines.find((l) => l.msg === 'traces exported over OTLP/HTTP');
    expect(started).toMatchObject({ collector: collector.url, sampleRatio: 1 });
    const request = collector.spans.find((s) => s.attributes['ons.request_id'] === 'req-on');
    expect(request?.name).toBe('GET /batches');
    const statements = collector.spans.filter(
      (s) => s.traceId === request!.traceId && s.parentSpanId === request!.spanId,
    );
    expect(statements.some((s) => s.name.startsWith('pg '))).toBe(true);
    expect(collector.resources).toContainEqual(
      expect.objectContaining({ 'service.name': 'ons-built', 'ons.role': 'all' }),
    );
  });
});
