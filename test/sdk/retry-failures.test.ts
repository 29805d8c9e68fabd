import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, createOnsClient, IDEMPOTENCY_KEY, OnsError, type OnsClientOptions } from '@ons/sdk';
import { KEYED_POSTS } from '../../sdk/src/transport.js';
import { ACTION_FEE, createSigner, createTemplate, fund } from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { startLiveService, type LiveService } from './live-service.js';

/**
 * The SDK sends a call again after a network failure or a gateway's 502/503/504 when the
 * service answers it idempotently: reads, signed actions, and creates sent with an
 * `Idempotency-Key` (sdk/README.md, "Retries"). Any other write surfaces the failure.
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

type Fault = 'lost' | 'unreachable' | 503;

/**
 * A client whose transport spoils its first sends (of the path `only`, when given), one fault
 * each: `lost` sends the call and throws as if the answer never came back, `unreachable`
 * throws without sending, a status answers it without sending.
 */
function faultyClient(
  faults: Fault[],
  options: Partial<OnsClientOptions> = {},
  only: string | null = null,
) {
  const sent: { method: string; path: string; key: string | null; replayed: string | null }[] = [];
  const ons = createOnsClient({
    baseUrl: live.baseUrl,
    session: { access_token: member.accessToken, refresh_token: member.refreshToken },
    retry: { defaultDelayMs: 1 },
    fetch: async (request) => {
      const path = new URL(request.url).pathname;
      const fault = only === null || path === only ? faults.shift() : undefined;
      const entry = {
        method: request.method,
        path,
        key: request.headers.get(IDEMPOTENCY_KEY),
        replayed: null as string | null,
      };
      sent.push(entry);
      if (fault === 'unreachable') throw new TypeError('fetch failed');
      if (typeof fault === 'number') {
        return new Response('<html>bad gateway</html>', { status: fault });
      }
      const response = await fetch(request);
      entry.replayed = response.headers.get('idempotent-replayed');
      if (fault === 'lost') {
        await response.body?.cancel();
        throw new TypeError('fetch failed');
      }
      return response;
    },
    ...options,
  });
  return { ons, sent };
}

async function count(table: 'templates' | 'action_logs', where: ReturnType<typeof sql>) {
  const { rows } = await live.svc.container.db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE ${where}`,
  );
  return rows[0]!.n;
}

describe('a call safe to repeat', () => {
  it('a create whose answer was lost is sent again with its key and answered once', async () => {
    const { ons, sent } = faultyClient(['lost']);
    const created = await ons.POST('/templates', { body: { name: 'retry-lost' } });
    expect(created.id).toMatch(/^tpl_/);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.key).toBe(sent[0]!.key);
    expect(sent[1]!.replayed).toBe('true');
    expect(await count('templates', sql`name = 'retry-lost'`)).toBe(1);
  });

  it('a signed action whose answer was lost is sent again and answered as it was applied', async () => {
    const owner = await createSigner(live.svc, { role: 'owner' });
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(live.svc, owner.orgId);
    const { ons, sent } = faultyClient(
      ['lost'],
      { session: { access_token: owner.accessToken, refresh_token: owner.refreshToken } },
      '/ebus/execute',
    );
    const signed = await ons.actions.sign({
      name: 'mint',
      params: { template_id: templateId },
      signer: owner.account,
      nonce: 0,
    });
    const applied = await ons.actions.execute(signed);
    expect(applied.action.hash).toBe(signed.hash);
    const executes = sent.filter((s) => s.path === '/ebus/execute');
    expect(executes).toHaveLength(2);
    expect(executes[1]!.replayed).toBe('true');
    expect(await count('action_logs', sql`hash = ${signed.hash}`)).toBe(1);
  });

  it('a read meets an unreachable service and a gateway 503, then succeeds; with retries off the failure surfaces', async () => {
    const { ons, sent } = faultyClient(['unreachable', 503]);
    await ons.GET('/templates');
    expect(sent).toHaveLength(3);

    const off = faultyClient([503], { retry: false });
    await expect(off.ons.GET('/templates')).rejects.toMatchObject({ status: 503 });
    expect(off.sent).toHaveLength(1);
    const down = faultyClient(['unreachable'], { retry: false });
    await expect(down.ons.GET('/templates')).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    expect(down.sent).toHaveLength(1);
  });

  it('gives up after `retries`, and never waits longer than maxDelayMs', async () => {
    const { ons, sent } = faultyClient([503, 503, 503, 503], { retry: { defaultDelayMs: 1 } });
    await expect(ons.GET('/templates')).rejects.toMatchObject({ status: 503 });
    expect(sent).toHaveLength(3); // the first and two retries

    const slow = faultyClient([503], { retry: { defaultDelayMs: 5_000, maxDelayMs: 1_000 } });
    const started = Date.now();
    await expect(slow.ons.GET('/templates')).rejects.toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(slow.sent).toHaveLength(1);
  });
});

describe('a write not safe to repeat', () => {
  it('surfaces a network failure, a 503, and a create sent without a key, each sent once', async () => {
    const prepare = (ons: ReturnType<typeof createOnsClient>) =>
      ons.POST('/ebus/prepare', {
        body: { action: { name: 'redeem', params: { object_id: 'obj_1' } } },
      });
    const lost = faultyClient(['unreachable']);
    const err: unknown = await prepare(lost.ons).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OnsError);
    expect(err).toMatchObject({ code: Code.UNAVAILABLE, status: 0 });
    expect(lost.sent).toHaveLength(1);

    const gateway = faultyClient([503]);
    await expect(prepare(gateway.ons)).rejects.toMatchObject({ status: 503 });
    expect(gateway.sent).toHaveLength(1);

    const keyless = faultyClient(['lost'], { retry: { idempotencyKeys: false } });
    await expect(
      keyless.ons.POST('/templates', { body: { name: 'retry-keyless' } }),
    ).rejects.toMatchObject({ code: Code.UNAVAILABLE });
    expect(keyless.sent).toHaveLength(1);
    expect(await count('templates', sql`name = 'retry-keyless'`)).toBe(1);
  });
});

describe("the SDK's list of keyed creates", () => {
  it('is every POST the service describes with an Idempotency-Key header', async () => {
    const res = await fetch(`${live.baseUrl}/openapi.json`);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
    };
    const keyed = Object.entries(doc.paths)
      .filter(([, ops]) =>
        (ops.post?.parameters ?? []).some(
          (p) => p.in === 'header' && p.name.toLowerCase() === IDEMPOTENCY_KEY,
        ),
      )
      .map(([path]) => path)
      .sort();
    expect(keyed.length).toBeGreaterThan(0);
    expect([...KEYED_POSTS].sort()).toEqual(keyed);
  });
});
