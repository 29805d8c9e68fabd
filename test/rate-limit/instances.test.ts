import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { allPermissions, createApiKey, type TestApiKey } from '../helpers/api-keys.js';
import { createSigner, signEoa, type EoaSigner } from '../helpers/ebus.js';
import {
  freePort,
  hasRedisServer,
  sleep,
  startServiceProcess,
  TestRedis,
  type ServiceProcess,
} from '../helpers/processes.js';
import { describeIf } from '../helpers/requires.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Two service processes on one database share their rate-limit counts through a Redis of
 * the test's own (`redis-server` on a free port; docs/api.md, "Rate limits": limits per API key and
 * per organization hold whichever process a request reaches). The counts are real time, so the
 * test waits for a fresh window instead of moving a clock.
 */
let redis: TestRedis;
let setup: TestService;
let a: ServiceProcess;
let b: ServiceProcess;

beforeAll(async () => {
  if (!hasRedisServer) return;
  redis = new TestRedis(await freePort());
  await redis.start();
  // Fixtures through an in-process instance; the two processes serve the requests.
  setup = await startTestService();
  const env = {
    DATABASE_URL: setup.config.databaseUrl!,
    REDIS_URL: redis.url,
    RATE_LIMIT_ENABLED: 'true',
    // Tokens and signed actions of the in-process instance are valid in both processes.
    PUBLIC_URL: setup.config.publicUrl,
    NETWORK_ID: setup.config.networkId,
    LOG_LEVEL: 'warn',
    WEBHOOK_DELIVERY: 'false',
  };
  [a, b] = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
}, 120_000);
afterAll(async () => {
  if (!hasRedisServer) return;
  await Promise.all([a?.stop(), b?.stop()]);
  await setup?.stop();
  await redis?.stop();
});

/** Waits until at least `ms` of the current fixed window of `windowMs` are left. */
async function freshWindow(windowMs: number, ms: number) {
  const left = windowMs - (Date.now() % windowMs);
  if (left < ms) await sleep(left + 20);
}

describeIf(hasRedisServer, 'a redis-server binary')(
  'rate limits across two service processes',
  () => {
    let key: TestApiKey;
    let signer: EoaSigner;
    beforeAll(async () => {
      signer = await createSigner(setup);
      key = await createApiKey(setup, signer, allPermissions());
    });

    it("share one API key's Read allowance of 300 a minute, with the same headers from both", async () => {
      // 300 requests take 9 s on an idle machine, longer on a busy one: room for both.
      await freshWindow(60_000, 40_000);
      let last = 0;
      const resets = new Set<string>();
      for (let i = 0; i < 300; i++) {
        // At least 30 ms apart, so never over the Read group's burst of 50 a second, even
        // when a slow answer is followed by quick ones.
        await sleep(Math.max(0, last + 30 - Date.now()));
        last = Date.now();
        const target = i % 2 === 0 ? a : b;
        const res = await fetch(`${target.url}/objects?limit=1`, { headers: key.headers });
        expect(res.status, `request ${i + 1}`).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('300');
        expect(res.headers.get('x-ratelimit-remaining'), `request ${i + 1}`).toBe(String(299 - i));
        resets.add(res.headers.get('x-ratelimit-reset')!);
      }
      expect(resets.size).toBe(1);
      for (const target of [a, b]) {
        const refused = await fetch(`${target.url}/objects?limit=1`, { headers: key.headers });
        expect(refused.status).toBe(429);
        expect((await refused.json()) as { code: number }).toMatchObject({ code: 8 });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
        expect(refused.headers.get('x-ratelimit-reset')).toBe([...resets][0]);
      }
    }, 60_000);

    it("share one organization's event bus allowance of 2,000 actions a second, counting every action of a batch", async () => {
      const one = await signEoa(setup, signer, {
        name: 'mint',
        params: { template_id: newId('template') },
        nonce: 1,
      });
      const batch = (n: number) =>
        JSON.stringify({ actions: Array.from({ length: n }, () => one) });
      const send = (target: ServiceProcess, body: string) =>
        fetch(`${target.url}/ebus/actions/batch`, {
          method: 'POST',
          headers: { ...signer.headers, 'content-type': 'application/json' },
          body,
        });
      // Each process's first event bus request is slow (its code is cold): on a busy machine
      // that alone can carry a burst over into the next window, where the sliding count lets
      // more through. One action to each first, then a burst two windows later (no weight
      // left of the warm-up).
      for (const target of [a, b]) expect((await send(target, batch(1))).status).toBe(200);
      const body = batch(100);
      // A burst whose answers were counted in two windows shows it in X-RateLimit-Reset; such
      // a try proves nothing exact, so it is tried again (at most three times).
      let windows: string[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        await sleep(2_000);
        await freshWindow(1_000, 900);
        // 24 batches of 100 at once, half to each process: 2,400 actions where 2,000 fit.
        const answers = await Promise.all(
          Array.from({ length: 24 }, (_, i) => send(i % 2 === 0 ? a : b, body)),
        );
        windows = [...new Set(answers.map((r) => r.headers.get('x-ratelimit-reset')!))];
        if (windows.length !== 1) continue;
        const statuses = answers.map((r) => r.status);
        expect(statuses.filter((s) => s === 429).length, statuses.join(' ')).toBe(4);
        expect(statuses.filter((s) => s === 200).length, statuses.join(' ')).toBe(20);
        for (const r of answers.filter((x) => x.status === 429)) {
          expect(((await r.json()) as { code: number }).code).toBe(8);
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        }
        return;
      }
      expect.fail(`every burst was counted in more than one window (last: ${windows.join(', ')})`);
    }, 60_000);
  },
);
