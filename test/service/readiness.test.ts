import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/pool.js';
import { Readiness } from '../../src/modules/health/service.js';
import { freePort, hasRedisServer, sleep, TestRedis } from '../helpers/processes.js';
import { freshDatabaseUrl } from '../helpers/db.js';
import { describeIf } from '../helpers/requires.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Issue 31 item 5: /readyz covers PostgreSQL and, when configured, Redis and the chain. A
 * missing PostgreSQL takes the instance out of rotation (503 `unavailable`); a missing Redis
 * or chain only degrades it (200 `degraded`, naming what is missing). The Redis is a
 * `redis-server` of the test's own; the chain is a JSON-RPC endpoint the test answers.
 */
const KEY = `0x${'11'.repeat(32)}`;

/** A JSON-RPC endpoint answering eth_blockNumber while `up`, 503 otherwise. */
interface FakeChain {
  url: string;
  up: boolean;
  calls: number;
  close(): Promise<void>;
}

async function fakeChain(): Promise<FakeChain> {
  const chain: FakeChain = { url: '', up: true, calls: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      chain.calls++;
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      if (!chain.up) return res.writeHead(503).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: method === 'eth_blockNumber' ? '0x2a' : null,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  chain.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chain.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return chain;
}

let redis: TestRedis;
let chain: FakeChain;
let svc: TestService;

beforeAll(async () => {
  chain = await fakeChain();
  if (!hasRedisServer) return;
  redis = new TestRedis(await freePort());
  await redis.start();
  svc = await startTestService({
    env: { REDIS_URL: redis.url, ANCHOR_RPC_URL: chain.url, ANCHOR_PRIVATE_KEY: KEY },
  });
}, 30_000);
afterAll(async () => {
  await svc?.stop();
  await redis?.stop();
  await chain.close();
});

async function readyz() {
  const res = await svc.app.inject({ method: 'GET', url: '/readyz' });
  return { status: res.statusCode, body: res.json<{ status: string }>() };
}

describeIf(hasRedisServer, 'redis-server')('/readyz', () => {
  it('is ready with PostgreSQL, Redis and the chain answering, and degraded (200) without Redis', async () => {
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', redis: 'ok', chain: 'ok' } },
    });
    await redis.stop();
    await sleep(200); // the client sees the connection close
    expect(await readyz()).toEqual({
      status: 200,
      body: { status: 'degraded', checks: { database: 'ok', redis: 'unavailable', chain: 'ok' } },
    });
    await redis.start();
    const until = Date.now() + 10_000;
    while ((await readyz()).body.status !== 'ready' && Date.now() < until) await sleep(100);
    expect((await readyz()).body).toMatchObject({ status: 'ready' });
  });

  it('asks the chain at most once per reuse period', async () => {
    const before = chain.calls;
    for (let i = 0; i < 5; i++) await readyz();
    expect(chain.calls - before).toBeLessThanOrEqual(1);
  });
});

describe('Readiness', () => {
  it('is unavailable (503, out of rotation) when PostgreSQL does not answer, whatever else does', async () => {
    const down = createDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/none`, 1);
    try {
      const r = new Readiness({ db: down.db, redis: () => true, chainRpcUrl: chain.url });
      expect(await r.check()).toEqual({
        status: 'unavailable',
        checks: { database: 'unavailable', redis: 'ok', chain: 'ok' },
      });
    } finally {
      await down.close();
    }
  });

  it('names a chain that does not answer as degraded, and is ready again once it does', async () => {
    const up = createDatabase(await freshDatabaseUrl(), 1);
    try {
      const r = new Readiness({ db: up.db, redis: null, chainRpcUrl: chain.url, chainReuseMs: 0 });
      expect(await r.check()).toEqual({ status: 'ready', checks: { database: 'ok', chain: 'ok' } });
      chain.up = false;
      expect(await r.check()).toEqual({
        status: 'degraded',
        checks: { database: 'ok', chain: 'unavailable' },
      });
      chain.up = true;
      expect((await r.check()).status).toBe('ready');
      // Nothing answering at all, and a port that is not a chain, are as good as down.
      const closed = new Readiness({
        db: up.db,
        redis: null,
        chainRpcUrl: `http://127.0.0.1:${await freePort()}`,
      });
      expect((await closed.check()).checks.chain).toBe('unavailable');
      // Only what is configured is checked.
      const bare = new Readiness({ db: up.db, redis: null, chainRpcUrl: null });
      expect(await bare.check()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    } finally {
      chain.up = true;
      await up.close();
    }
  });
});
