import { describe, expect, it } from 'vitest';
import { createOtelTracing } from './otel.js';
import { parseTraceparent } from './trace-api.js';

const options = (sampleRatio: number) => ({
  // No collector: unsampled spans are never sent, sampled ones fail to be.
  endpoint: 'http://127.0.0.1:9',
  exporterHeaders: {},
  serviceName: 'ons-test',
  sampleRatio,
  role: 'all',
});
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('sampling', () => {
  it("decides by the ratio, not by the client's sampled flag", async () => {
    const never = createOtelTracing(options(0));
    const forced = never.startRequest('GET', '/x', 'req_1', `00-${TRACE}-00f067aa0ba902b7-01`);
    // Not recorded, so its statements make no span either.
    expect(never.within(forced.ctx, () => never.startQuery('SELECT 1', undefined))).toBeNull();
    forced.span.end();
    await never.shutdown();

    const always = createOtelTracing(options(1));
    const declined = always.startRequest('GET', '/x', 'req_2', `00-${TRACE}-00f067aa0ba902b7-00`);
    const query = always.within(declined.ctx, () => always.startQuery('SELECT 1', undefined));
    expect(query).not.toBeNull();
    query!.end();
    declined.span.end();
    // Its span goes to a port nobody listens on: the export fails, which shutdown reports.
    await expect(always.shutdown()).rejects.toThrow(/ECONNREFUSED/);
  });

  it('gives each action of a group the traceparent of its own request, sampled or not', async () => {
    const t = createOtelTracing(options(0));
    const a = t.startRequest('POST', '/ebus/execute', 'req_a', `00-${TRACE}-00f067aa0ba902b7-01`);
    const seen = await t.group(
      [
        { hash: 'h1', ctx: a.ctx },
        { hash: 'h2', ctx: null },
      ],
      () => Promise.resolve([t.traceparentOf('h1'), t.traceparentOf('h2'), t.traceparentOf('h3')]),
    );
    expect(seen[0]).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    expect(seen.slice(1)).toEqual([null, null]);
    // Outside the group nothing is known.
    expect(t.traceparentOf('h1')).toBeNull();
    await t.shutdown();
  });
});

describe('parseTraceparent', () => {
  it('reads a version-00 traceparent and refuses anything else', () => {
    expect(parseTraceparent(`00-${TRACE}-00f067aa0ba902b7-01`)).toEqual({
      traceId: TRACE,
      spanId: '00f067aa0ba902b7',
      flags: 1,
    });
    for (const bad of [
      undefined,
      null,
      '',
      `01-${TRACE}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`,
      `00-${TRACE}-00f067aa0ba902b7-01-extra`,
    ]) {
      expect(parseTraceparent(bad)).toBeNull();
    }
  });
});
