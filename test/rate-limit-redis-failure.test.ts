import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from './helpers/fixtures.js';
import { freePort, redisAnswers, sleep } from './helpers/processes.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * The service's rate limits on a Redis of the test's own (`redis-server` on a free port),
 * stopped and started again while requests keep coming.
 */
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) {
  console.warn('rate-limit-redis-failure: skipped, no redis-server binary on this machine');
}

let port: number;
let redisUrl: string;
let redis: ChildProcess | null = null;

async function startRedis(): Promise<void> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  redis = child;
  const until = Date.now() + 10_000;
  while (!(await redisAnswers(redisUrl))) {
    if (Date.now() > until || child.exitCode !== null)
      throw new Error('redis-server did not start');
    await sleep(50);
  }
}

async function stopRedis(): Promise<void> {
  const child = redis;
  redis = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

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
  port = await freePort();
  redisUrl = `redis://127.0.0.1:${port}`;
  await startRedis();
  svc = await startTestService({ env: { REDIS_URL: redisUrl, RATE_LIMIT_ENABLED: 'true' } });
  member = await createMember(svc);
}, 30_000);
afterAll(async () => {
  if (!hasRedisServer) return;
  await svc?.stop();
  await stopRedis();
});

const logged = (text: string) =>
  svc.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes(text)).length;

async function read() {
  const res = await svc.app.inject({ method: 'GET', url: '/objects', headers: member.headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['x-ratelimit-limit']).toBe('300');
  return res;
}

describe.skipIf(!hasRedisServer)('rate limits when Redis goes away', () => {
  it('count in Redis while it answers', async () => {
    await read();
    await read();
    expect((await keysOf(member.walletId)).length).toBeGreaterThan(0);
    expect(logged('Redis is unavailable')).toBe(0);
  });

  it('keep answering from memory while Redis is stopped, logging the fall-back once', async () => {
    await stopRedis();
    for (let i = 0; i < 20; i++) {
      await read();
      await sleep(50);
    }
    expect(logged('Redis is unavailable')).toBe(1);
    const warning = svc.logs.find(
      (l) => typeof l.msg === 'string' && l.msg.includes('Redis is unavailable'),
    );
    expect(warning?.level).toBe(40);
  });

  it('return to Redis when it is back, without a failed request', async () => {
    await startRedis();
    const until = Date.now() + 15_000;
    while (logged('Redis is back') === 0) {
      expect(Date.now(), 'the service did not return to Redis').toBeLessThan(until);
      await read();
      await sleep(100);
    }
    await read();
    // A fresh redis-server: its counts can only have come from the service after its return.
    expect((await keysOf(member.walletId)).length).toBeGreaterThan(0);
    expect(logged('Redis is back')).toBe(1);
    expect(logged('Redis is unavailable')).toBe(1);
  }, 30_000);
});
