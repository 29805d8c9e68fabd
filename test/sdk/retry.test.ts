import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, createOnsClient, OnsError, type OnsClientOptions } from '@ons/sdk';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { startLiveService, type LiveService } from './live-service.js';

/**
 * Rate limits on, tight: the default group (GET /ebus/nonce, POST /ebus/prepare, …) allows 2
 * calls a second per caller (docs/api.md, "Rate limits"). Five calls at once exceed that even when
 * they straddle two one-second windows. Each test uses its own caller.
 *
 * The limiter reads the service's clock, which is fake and stands still while calls run; the
 * SDK waits out a Retry-After in real time. So once a 429 has asked for a wait, the next call
 * sent (a retry, after that wait) first moves the service's clock on by the wait asked:
 * without the SDK's wait the retries would come back 429 again.
 */
let live: LiveService;
beforeAll(async () => {
  live = await startLiveService({
    env: {
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_DEFAULT_PER_SECOND: '2',
      RATE_LIMIT_DEFAULT_PER_MINUTE: '1000',
    },
  });
});
afterAll(async () => {
  await live.stop();
});

/** The service's time (ms) at which the longest wait a 429 has asked for ends. */
let waitedUntil = 0;

/** A client for a fresh caller that records each answer's status. */
async function caller(options: Partial<OnsClientOptions> = {}) {
  const member: TestMember = await createMember(live.svc, { role: 'owner' });
  const statuses: number[] = [];
  const clock = live.svc.clock;
  const ons = createOnsClient({
    baseUrl: live.baseUrl,
    session: { access_token: member.accessToken, refresh_token: member.refreshToken },
    fetch: async (request) => {
      if (clock.now().getTime() < waitedUntil) clock.set(new Date(waitedUntil));
      const response = await fetch(request);
      statuses.push(response.status);
      const retryAfter = Number(response.headers.get('retry-after'));
      if (response.status === 429 && retryAfter > 0) {
        waitedUntil = Math.max(waitedUntil, clock.now().getTime() + retryAfter * 1000);
      }
      return response;
    },
    ...options,
  });
  return { ons, statuses };
}

const FIVE = [1, 2, 3, 4, 5];
const prepare = (ons: ReturnType<typeof createOnsClient>) =>
  ons.POST('/ebus/prepare', {
    body: { action: { name: 'redeem', params: { object_id: 'obj_1' } } },
  });
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('429 Too Many Requests', () => {
  it('is waited out for a read: Retry-After honoured, then every call succeeds', async () => {
    const { ons, statuses } = await caller({ retry: { retries: 4 } });
    const started = Date.now();
    const answers = await Promise.all(FIVE.map(() => ons.GET('/ebus/nonce')));
    expect(answers.map((a) => a.nonce)).toEqual([0, 0, 0, 0, 0]);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(1);
    expect(count(statuses, 200)).toBe(5);
    // Each 429 said Retry-After: 1 (at least a second); the SDK waited before sending again.
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('surfaces at once for a write that is not idempotent, with the wait the service asked', async () => {
    const { ons, statuses } = await caller();
    const outcomes = await Promise.allSettled(FIVE.map(() => prepare(ons)));
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      const err: unknown = r.reason;
      expect(err).toBeInstanceOf(OnsError);
      expect(err).toMatchObject({ code: Code.RESOURCE_EXHAUSTED, status: 429 });
      expect((err as OnsError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect((err as OnsError).requestId).toMatch(/^req_/);
    }
    expect(statuses).toHaveLength(5); // nothing sent again
  });

  it('is waited out for such a write too when the client says writes may be retried', async () => {
    const { ons, statuses } = await caller({ retry: { nonIdempotent: true, retries: 4 } });
    const answers = await Promise.all(FIVE.map(() => prepare(ons)));
    expect(answers.every((a) => a.action.name === 'redeem')).toBe(true);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(1);
    expect(count(statuses, 200)).toBe(5);
  });

  it('is not waited for past maxDelayMs, nor retried more than `retries` times or when off', async () => {
    const { ons, statuses } = await caller({ retry: { maxDelayMs: 500 } });
    const started = Date.now();
    const settled = await Promise.allSettled(FIVE.map(() => ons.GET('/ebus/nonce')));
    expect(Date.now() - started).toBeLessThan(900); // Retry-After 1 s > 500 ms: not waited
    const refused = settled.filter((s) => s.status === 'rejected');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ status: 429 });
    expect(statuses).toHaveLength(5);

    for (const retry of [{ retries: 0 }, false] as const) {
      const { ons: once, statuses: sent } = await caller({ retry });
      const outcomes = await Promise.allSettled(FIVE.map(() => once.GET('/ebus/nonce')));
      expect(outcomes.filter((s) => s.status === 'rejected').length).toBe(count(sent, 429));
      expect(count(sent, 429)).toBeGreaterThanOrEqual(1);
      expect(sent).toHaveLength(5);
    }

    // One retry at most: ten calls at once are sent at most twice each (with the default two
    // retries they would be sent 24 times: 10, then 8 refused, then 6 refused).
    const { ons: limited, statuses: sent } = await caller({ retry: { retries: 1 } });
    const ten = await Promise.allSettled([...FIVE, ...FIVE].map(() => limited.GET('/ebus/nonce')));
    expect(sent.length).toBeLessThanOrEqual(20);
    expect(ten.filter((s) => s.status === 'rejected').length).toBeGreaterThanOrEqual(1);
  });
});
