import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { MicroCache } from './micro-cache.js';

/** A request of `url` and a reply whose serialiser answers `body`; counts the computes. */
function call(cache: MicroCache, url: string, body: string, computed: { n: number }) {
  const req = { url } as FastifyRequest;
  const reply = { type: () => reply, serialize: (v: unknown) => v } as unknown as FastifyReply;
  return cache.serve(req, reply, () => {
    computed.n++;
    return Promise.resolve(body);
  });
}

describe('MicroCache', () => {
  it('answers an identical request from memory within its time', async () => {
    const cache = new MicroCache(60_000);
    const computed = { n: 0 };
    expect(await call(cache, '/a', 'one', computed)).toBe('one');
    expect(await call(cache, '/a', 'two', computed)).toBe('one');
    expect(computed.n).toBe(1);
  });

  it('keeps no more characters than its budget, and no answer above a tenth of it', async () => {
    const cache = new MicroCache(60_000, 2_000, 1_000);
    const computed = { n: 0 };
    for (let i = 0; i < 50; i++) await call(cache, `/page/${i}`, 'x'.repeat(90), computed);
    expect(cache.size).toBeLessThanOrEqual(1_000);
    // The latest page is still kept; the first went when the budget emptied the cache.
    await call(cache, '/page/49', 'x'.repeat(90), computed);
    expect(computed.n).toBe(50);
    await call(cache, '/page/0', 'x'.repeat(90), computed);
    expect(computed.n).toBe(51);
    // Too large to keep: computed every time.
    await call(cache, '/big', 'y'.repeat(101), computed);
    await call(cache, '/big', 'y'.repeat(101), computed);
    expect(computed.n).toBe(53);
    expect(cache.size).toBeLessThanOrEqual(1_000);
  });

  it('forgets every answer at a clear, and does not keep one computed across it', async () => {
    const cache = new MicroCache(60_000);
    const computed = { n: 0 };
    await call(cache, '/a', 'old', computed);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(await call(cache, '/a', 'new', computed)).toBe('new');
    expect(computed.n).toBe(2);

    // A compute that began before the clear answers its caller but is not kept.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const req = { url: '/b' } as FastifyRequest;
    const reply = { type: () => reply, serialize: (v: unknown) => v } as unknown as FastifyReply;
    const inFlight = cache.serve(req, reply, async () => {
      await gate;
      return 'stale';
    });
    cache.clear();
    release();
    expect(await inFlight).toBe('stale');
    expect(await call(cache, '/b', 'fresh', computed)).toBe('fresh');
  });
});
