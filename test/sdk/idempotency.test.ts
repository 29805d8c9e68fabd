import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOnsClient, IDEMPOTENCY_KEY } from '@ons/sdk';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { startLiveService, type LiveService } from './live-service.js';

/**
 * The SDK sends one `Idempotency-Key` per POST call, the same on each of its retries, so a
 * retry whose first answer was lost gets that answer instead of a second record.
 */
let live: LiveService;
let member: TestMember;
beforeAll(async () => {
  live = await startLiveService();
  member = await createMember(live.svc, { role: 'owner' });
});
afterAll(async () => {
  await live.stop();
});

/** A client whose transport loses the answer of the first `lose` sends (a 429 instead). */
function losingClient(lose: number, options: { idempotencyKeys?: boolean } = {}) {
  const sent: { method: string; key: string | null; replayed: string | null }[] = [];
  const ons = createOnsClient({
    baseUrl: live.baseUrl,
    session: { access_token: member.accessToken, refresh_token: member.refreshToken },
    retry: { nonIdempotent: true, retries: 2, defaultDelayMs: 1, ...options },
    fetch: async (request) => {
      const response = await fetch(request);
      sent.push({
        method: request.method,
        key: request.headers.get(IDEMPOTENCY_KEY),
        replayed: response.headers.get('idempotent-replayed'),
      });
      if (sent.length <= lose) {
        await response.body?.cancel();
        return new Response(JSON.stringify({ code: 8, message: 'lost' }), {
          status: 429,
          headers: { 'content-type': 'application/json' },
        });
      }
      return response;
    },
  });
  return { ons, sent };
}

async function templatesNamed(name: string): Promise<number> {
  const { rows } = await live.svc.container.db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM templates WHERE name = ${name}`,
  );
  return rows[0]!.n;
}

describe('Idempotency-Key from the SDK', () => {
  it('sends one key per call on every retry: a lost answer is replayed, not created twice', async () => {
    const { ons, sent } = losingClient(1);
    const created = await ons.POST('/templates', { body: { name: 'sdk-once' } });
    expect(created.id).toMatch(/^tpl_/);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    expect(sent[1]!.replayed).toBe('true');
    expect(await templatesNamed('sdk-once')).toBe(1);

    // Another call: another key. A GET carries none.
    await ons.POST('/templates', { body: { name: 'sdk-twice' } });
    expect(sent[2]!.key).not.toBe(sent[0]!.key);
    await ons.GET('/templates');
    expect(sent[3]).toMatchObject({ method: 'GET', key: null });
  });

  it("keeps the caller's own key, and sends none when turned off", async () => {
    const { ons, sent } = losingClient(0);
    await ons.POST('/templates', {
      body: { name: 'sdk-own' },
      headers: { 'Idempotency-Key': 'my-own-key' },
    });
    expect(sent[0]!.key).toBe('my-own-key');

    const off = losingClient(1, { idempotencyKeys: false });
    await off.ons.POST('/templates', { body: { name: 'sdk-off' } });
    expect(off.sent.map((s) => s.key)).toEqual([null, null]);
    // Without a key the lost answer's retry created a second template.
    expect(await templatesNamed('sdk-off')).toBe(2);
  });

  it('makes keys where crypto.randomUUID is missing (a browser page served over http)', async () => {
    const own = Object.getOwnPropertyDescriptor(globalThis.crypto, 'randomUUID');
    Object.defineProperty(globalThis.crypto, 'randomUUID', {
      value: undefined,
      configurable: true,
    });
    try {
      const { ons, sent } = losingClient(0);
      await ons.POST('/templates', { body: { name: 'sdk-no-uuid' } });
      expect(sent[0]!.key).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    } finally {
      if (own) Object.defineProperty(globalThis.crypto, 'randomUUID', own);
      else delete (globalThis.crypto as { randomUUID?: unknown }).randomUUID;
    }
    expect(typeof globalThis.crypto.randomUUID).toBe('function');
  });
});
