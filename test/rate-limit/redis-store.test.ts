import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, hasRedisServer, TestRedis } from '../helpers/processes.js';
import { describeIf } from '../helpers/requires.js';
import { buildGroups } from '../../src/http/rate-limit/groups.js';
import { RateLimiter } from '../../src/http/rate-limit/limiter.js';
import { RedisStore } from '../../src/http/rate-limit/redis-store.js';

/** On a `redis-server` of the test's own, so it runs wherever the binary is (.ci/run installs it). */
describeIf(hasRedisServer, 'a redis-server binary')(
  'the Redis store, many requests in one event-loop turn',
  () => {
    let redis: TestRedis;
    let store: RedisStore;
    beforeAll(async () => {
      redis = new TestRedis(await freePort());
      await redis.start();
      store = new RedisStore(redis.url);
    });
    afterAll(async () => {
      await store?.close();
      await redis?.stop();
    });
    const groups = buildGroups({ perMinute: 1200, perSecond: 100 });

    it('counts each request as if it had come alone: exact counts, exact refusals', async () => {
      const now = 1_800_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
      const limiter = new RateLimiter(store, () => now);
      const subject = `s${Math.random()}`;
      // The upload group: 30 a minute, 5 a second. Eight at once: five pass, three are refused.
      const decisions = await Promise.all(
        Array.from({ length: 8 }, () => limiter.check(groups.upload, subject)),
      );
      expect(decisions.map((d) => d.allowed)).toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
        false,
        false,
      ]);
      expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([29, 28, 27, 26, 25]);
      // The refused took their cost back: one more, past the burst window, is the sixth of the minute.
      const later = new RateLimiter(store, () => now + 2_000);
      expect((await later.check(groups.upload, subject)).remaining).toBe(24);
    });

    it('keeps the windows of different callers apart within one call', async () => {
      const now = 1_800_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
      const limiter = new RateLimiter(store, () => now);
      const [a, b] = [`a${Math.random()}`, `b${Math.random()}`];
      const decisions = await Promise.all([
        limiter.check(groups.upload, a),
        limiter.check(groups.upload, b),
        limiter.check(groups.upload, a, 3),
        limiter.check(groups.upload, b),
      ]);
      expect(decisions.map((d) => d.remaining)).toEqual([29, 29, 26, 28]);
    });
  },
);
