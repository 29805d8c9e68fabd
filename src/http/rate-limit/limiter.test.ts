import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildGroups, groupOf } from './groups.js';
import { RateLimiter } from './limiter.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { RateLimitStore } from './store.js';

const groups = buildGroups({ perMinute: 1200, perSecond: 100 });

async function redisAvailable(): Promise<boolean> {
  const { Socket } = await import('node:net');
  return new Promise((resolve) => {
    const s = new Socket();
    s.setTimeout(500);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
    s.connect(6379, '127.0.0.1');
  });
}

function suite(name: string, makeStore: () => Promise<RateLimitStore | null>) {
  describe(name, () => {
    let store: RateLimitStore | null = null;
    afterAll(async () => {
      await store?.close();
    });

    it('allows the burst, refuses the next with a retry time, and recovers', async (ctx) => {
      store = await makeStore();
      if (!store) return ctx.skip();
      let now = 1_800_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
      const limiter = new RateLimiter(store, () => now);
      const subject = `s${Math.random()}`;
      for (let i = 0; i < 5; i++)
        expect((await limiter.check(groups.upload, subject)).allowed).toBe(true);
      const refused = await limiter.check(groups.upload, subject);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
      expect(refused.limit).toBe(30);
      now += 2_000;
      const later = await limiter.check(groups.upload, subject);
      expect(later.allowed).toBe(true);
      expect(later.remaining).toBe(30 - 6);
    });

    it('holds the per-minute limit across seconds and rolls it over', async (ctx) => {
      store ??= await makeStore();
      if (!store) return ctx.skip();
      // Start at a window boundary, so all 30 fall into one minute window.
      let now = 1_900_000_020_000 + Math.floor(Math.random() * 1e6) * 60_000;
      now -= now % 60_000;
      const limiter = new RateLimiter(store, () => now);
      const subject = `m${Math.random()}`;
      for (let i = 0; i < 30; i++) {
        expect((await limiter.check(groups.upload, subject)).allowed).toBe(true);
        now += 1_000;
      }
      expect((await limiter.check(groups.upload, subject)).allowed).toBe(false);
      now += 120_000;
      expect((await limiter.check(groups.upload, subject)).allowed).toBe(true);
    });

    it('counts a batch of actions by its size against the organization', async (ctx) => {
      store ??= await makeStore();
      if (!store) return ctx.skip();
      const now = 2_000_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
      const limiter = new RateLimiter(store, () => now);
      const org = `org${Math.random()}`;
      for (let i = 0; i < 20; i++)
        expect((await limiter.check(groups.ebus, org, 100)).allowed).toBe(true);
      expect((await limiter.check(groups.ebus, org, 1)).allowed).toBe(false);
    });
  });
}

suite('rate limiter on the memory store', async () => new MemoryStore());
suite('rate limiter on Redis (skipped when no Redis answers on 127.0.0.1:6379)', async () =>
  (await redisAvailable()) ? new RedisStore('redis://127.0.0.1:6379') : null,
);

describe('the memory store', () => {
  it("sweeps by the limiter's clock: a window that clock is in stays, however far the wall clock is", async () => {
    // The sweeper's interval is faked; Date.now (the wall clock) is not.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const now = Date.now() - 24 * 3_600_000;
    const store = new MemoryStore(() => now);
    try {
      const limiter = new RateLimiter(store, () => now);
      for (let i = 0; i < 5; i++)
        expect((await limiter.check(groups.upload, 's')).allowed).toBe(true);
      vi.advanceTimersByTime(60_000);
      expect((await limiter.check(groups.upload, 's')).allowed).toBe(false);
    } finally {
      await store.close();
      vi.useRealTimers();
    }
  });
});

describe('groups', () => {
  it('maps the paths of the rate-limit table to their groups', () => {
    expect(groupOf('GET', '/objects')).toBe('read');
    expect(groupOf('GET', '/objects/:id')).toBe('read');
    expect(groupOf('GET', '/templates')).toBe('read');
    expect(groupOf('GET', '/wallets/me')).toBe('read');
    expect(groupOf('GET', '/indexer/objects/:id/history')).toBe('read');
    expect(groupOf('GET', '/indexer/search')).toBe('search');
    expect(groupOf('GET', '/indexer/query')).toBe('search');
    expect(groupOf('POST', '/objects')).toBe('write');
    expect(groupOf('PUT', '/objects/:id')).toBe('write');
    expect(groupOf('POST', '/templates')).toBe('write');
    expect(groupOf('PUT', '/templates/:id')).toBe('write');
    expect(groupOf('POST', '/ebus/actions')).toBe('ebus');
    expect(groupOf('POST', '/ebus/actions/batch')).toBe('ebus');
    expect(groupOf('POST', '/storage/upload')).toBe('upload');
    expect(groupOf('POST', '/webhooks')).toBe('webhooks');
    expect(groupOf('PUT', '/webhooks/:id')).toBe('webhooks');
    expect(groupOf('POST', '/webhooks/:webhookId/events/:eventId/redeliver')).toBe('webhooks');
    expect(groupOf('POST', '/webhooks/:webhookId/replay')).toBe('webhooks');
    expect(groupOf('POST', '/webhooks/:webhookId/rotate-key')).toBe('webhooks');
    expect(groupOf('GET', '/batches/:batchId/content')).toBe('content');
    expect(groupOf('POST', '/organizations/wallets')).toBe('signup');
    expect(groupOf('POST', '/wallets')).toBe('signup');
    expect(groupOf('GET', '/batches/:batchId')).toBe('default');
    expect(groupOf('GET', '/public/objects')).toBe('default');
  });

  it('counts the event bus and webhook management per organization, the others per caller', () => {
    const per = Object.fromEntries(Object.values(groups).map((g) => [g.name, g.per]));
    expect(per).toMatchObject({ ebus: 'organization', webhooks: 'organization', write: 'caller' });
  });
});
