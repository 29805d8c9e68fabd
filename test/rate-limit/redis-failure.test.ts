import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { freePort, hasRedisServer, sleep, TestRedis } from '../helpers/processes.js';
import { describeIf } from '../helpers/requires.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The service's rate limits on a Redis of the test's own (`redis-server` on a free port),
 * stopped and started again while requests keep coming.
 */
let redis: TestRedis;
let redisUrl: string;

async function keysOf(walletId: string): Promise<string[]> {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
  try {
    return await client.keys(`ons:rl:*${walletId}*`);
  } finally {
    client.disconnect();
  }
}

let svc: TestService;
let member: TestMember;

beforeAll(async () => {
  if (!hasRedisServer) return;
  redis = new TestRedis(await freePort());
  redisUrl = redis.url;
  await redis.start();
  svc = await startTestService({ env: { REDIS_URL: redisUrl, RATE_LIMIT_ENABLED: 'true' } });
  member = await createMember(svc);
}, 30_000);
afterAll(async () => {
  if (!hasRedisServer) return;
  await svc?.stop();
  await redis?.stop();
});

/**
 * Waits in real time (Redis stops, comes back and is tried again in real time), and moves the
 * service's clock, which the limiter reads, as far: the reads keep the pace they have in real
 * time, well under the Read group's 50 a second.
 */
async function pause(ms: number) {
  await sleep(ms);
  svc.clock.advance(ms);
}

const logged = (text: string) =>
  svc.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes(text)).length;

async function read() {
  const res = await svc.app.inject({ method: 'GET', url: '/objects', headers: member.headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['x-ratelimit-limit']).toBe('300');
  return res;
}

describeIf(hasRedisServer, 'a redis-server binary')('rate limits when Redis goes away', () => {
  it('count in Redis while it answers', async () => {
    await read();
    await read();
    expect((await keysOf(member.walletId)).length).toBeGreaterThan(0);
    expect(logged('Redis is unavailable')).toBe(0);
  });

  it('keep answering from memory while Redis is stopped, logging the fall-back once', async () => {
    await redis?.stop();
    for (let i = 0; i < 20; i++) {
      await read();
      await pause(50);
    }
    expect(logged('Redis is unavailable')).toBe(1);
    const warning = svc.logs.find(
      (l) => typeof l.msg === 'string' && l.msg.includes('Redis is unavailable'),
    );
    expect(warning?.level).toBe(40);
  });

  it('return to Redis when it is back, without a failed request', async () => {
    await redis.start();
    const until = Date.now() + 15_000;
    while (logged('Redis is back') === 0) {
      expect(Date.now(), 'the service did not return to Redis').toBeLessThan(until);
      await read();
      await pause(100);
    }
    await read();
    // A fresh redis-server: its counts can only have come from the service after its return.
    expect((await keysOf(member.walletId)).length).toBeGreaterThan(0);
    expect(logged('Redis is back')).toBe(1);
    expect(logged('Redis is unavailable')).toBe(1);
  }, 30_000);
});
