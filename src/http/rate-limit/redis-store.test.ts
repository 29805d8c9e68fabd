import { afterAll, describe, expect, it } from 'vitest';
import { redisAnswers } from '../../../test/helpers/processes.js';
import { buildGroups } from './groups.js';
import { RateLimiter } from './limiter.js';
import { RedisStore } from './redis-store.js';

const url = 'redis://127.0.0.1:6379';
const up = await redisAnswers(url);
if (!up) console.warn(`redis-store: skipped, no Redis answers at ${url}`);

describe.skipIf(!up)('the Redis store, many requests in one event-loop turn', () => {
  const store = up ? new RedisStore(url) : null;
  afterAll(async () => {
    await store?.close();
  });
  const groups = buildGroups({ perMinute: 1200, perSecond: 100 });

  it('counts each request as if it had come alone: exact counts, exact refusals', async () => {
    const now = 1_800_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
    const limiter = new RateLimiter(store!, () => now);
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
    const later = new RateLimiter(store!, () => now + 2_000);
    expect((await later.check(groups.upload, subject)).remaining).toBe(24);
  });

  it('keeps the windows of different callers apart within one call', async () => {
    const now = 1_800_000_000_000 + Math.floor(Math.random() * 1e6) * 60_000;
    const limiter = new RateLimiter(store!, () => now);
    const [a, b] = [`a${Math.random()}`, `b${Math.random()}`];
    const decisions = await Promise.all([
      limiter.check(groups.upload, a),
      limiter.check(groups.upload, b),
      limiter.check(groups.upload, a, 3),
      limiter.check(groups.upload, b),
    ]);
    expect(decisions.map((d) => d.remaining)).toEqual([29, 29, 26, 28]);
  });
});
