import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/lib/errors.js';
import { parseTokens } from '../../src/lib/money.js';
import { recordLedgerEntry } from '../../src/modules/balance/ledger.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { deposit, expectBalanceIsLedgerSum } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

const ONE = 10n ** 18n;
const svc = useTestService({
  now: '2026-03-10T12:00:00.000Z',
  extraRoutes: (app, c) => {
    // Stands in for a feature that charges a fee, to see the error on the wire.
    app.post('/test/charge/:orgId', { config: { auth: 'none' } }, async (req) => {
      const { orgId } = req.params as { orgId: string };
      await c.db.transaction((tx) =>
        recordLedgerEntry(tx, {
          orgId,
          kind: 'action_fee',
          amountWei: -ONE,
          refId: null,
          now: c.clock.now(),
        }),
      );
      return {};
    });
  },
});

async function charge(
  orgId: string,
  tokens: string,
  kind: 'action_fee' | 'adjustment' = 'action_fee',
) {
  return svc.container.db.transaction((tx) =>
    recordLedgerEntry(tx, {
      orgId,
      kind,
      amountWei: -parseTokens(tokens),
      refId: 'act_test',
      now: svc.clock.now(),
    }),
  );
}

async function getBalance(m: TestMember) {
  const res = await svc.app.inject({
    method: 'GET',
    url: `/organizations/${m.orgId}/balance`,
    headers: m.headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('the ledger', () => {
  it('keeps the balance equal to the sum of the ledger after every operation', async () => {
    const m = await createMember(svc);
    await expectBalanceIsLedgerSum(svc, m.orgId);
    await deposit(svc, m.orgId, '3');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(3n * ONE);
    const entry = await charge(m.orgId, '0.25');
    expect(entry.balanceAfterWei).toBe(275n * 10n ** 16n);
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(entry.balanceAfterWei);
    await charge(m.orgId, '0.75', 'adjustment');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(2n * ONE);
    await expect(charge(m.orgId, '2.000000000000000001')).rejects.toThrow(/insufficient balance/);
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(2n * ONE);
    await charge(m.orgId, '2');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(0n);
    const { rows } = await svc.container.db.execute<{
      kind: string;
      amount_wei: string;
      balance_after_wei: string;
    }>(
      sql`SELECT kind, amount_wei::text, balance_after_wei::text FROM ledger_entries
          WHERE organization_id = ${m.orgId} ORDER BY created_at, id`,
    );
    expect(rows.map((r) => [r.kind, r.amount_wei, r.balance_after_wei])).toEqual([
      ['deposit', (3n * ONE).toString(), (3n * ONE).toString()],
      ['action_fee', (-25n * 10n ** 16n).toString(), (275n * 10n ** 16n).toString()],
      ['adjustment', (-75n * 10n ** 16n).toString(), (2n * ONE).toString()],
      ['action_fee', (-2n * ONE).toString(), '0'],
    ]);
  });

  it('refuses a debit beyond the balance with code 9 and HTTP 402, changing nothing', async () => {
    const m = await createMember(svc);
    await deposit(svc, m.orgId, '0.5');
    const err = await charge(m.orgId, '1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 9, httpStatus: 402 });
    const res = await svc.app.inject({ method: 'POST', url: `/test/charge/${m.orgId}` });
    expect(res.statusCode).toBe(402);
    expect(res.json()).toMatchObject({ code: 9 });
    expect(res.json().message).toContain('1 ONS needed, 0.5 ONS available');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(ONE / 2n);
  });

  it('rolls the ledger row back with the transaction of its cause', async () => {
    const m = await createMember(svc);
    await deposit(svc, m.orgId, '1');
    await expect(
      svc.container.db.transaction(async (tx) => {
        await recordLedgerEntry(tx, {
          orgId: m.orgId,
          kind: 'action_fee',
          amountWei: -ONE / 4n,
          refId: null,
          now: svc.clock.now(),
        });
        throw new Error('the action failed after being charged');
      }),
    ).rejects.toThrow('the action failed');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(ONE);
  });

  it('never overdraws under concurrent debits', async () => {
    const m = await createMember(svc);
    await deposit(svc, m.orgId, '1');
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, () => charge(m.orgId, '0.1')),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBe(10);
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(0n);
  });

  it('answers 404 for an organization that does not exist', async () => {
    await expect(charge('org_missing', '1')).rejects.toMatchObject({ code: 5 });
  });
});

describe('GET /organizations/{id}/balance', () => {
  it('answers the balance in wei and in whole tokens', async () => {
    const m = await createMember(svc, { role: 'viewer' });
    expect(await getBalance(m)).toEqual({
      organization_id: m.orgId,
      token: 'ONS',
      decimals: 18,
      balance_wei: '0',
      balance: '0',
      low_balance_wei: null,
      low: false,
      actions_left: '0',
    });
    await deposit(svc, m.orgId, '1234.000000000000000005');
    expect(await getBalance(m)).toMatchObject({
      balance_wei: '1234000000000000000005',
      balance: '1234.000000000000000005',
      // At today's price (1.1e15 wei with the test's settings).
      actions_left: (1234000000000000000005n / 1_100_000_000_000_000n).toString(),
    });
  });
});

describe('GET /organizations/{id}/balance/history', () => {
  let m: TestMember;
  beforeAll(async () => {
    svc.clock.set('2026-03-10T12:00:00.000Z');
    m = await createMember(svc, { role: 'viewer' });
    await deposit(svc, m.orgId, '10');
    await expectBalanceIsLedgerSum(svc, m.orgId);
    svc.clock.set('2026-03-11T09:00:00.000Z');
    await charge(m.orgId, '1');
    svc.clock.set('2026-03-11T10:00:00.000Z');
    await charge(m.orgId, '0.5');
    svc.clock.set('2026-03-13T00:00:00.000Z');
    await deposit(svc, m.orgId, '2');
    svc.clock.set('2026-03-13T15:00:00.000Z');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(105n * 10n ** 17n);
    // Days have passed on the clock: sign in again for a live access token.
    const tokens = await svc.container.sessions.issue(svc.container.db, {
      walletId: m.walletId,
      orgId: m.orgId,
    });
    m = { ...m, headers: { authorization: `Bearer ${tokens.access_token}` } };
  });

  async function history(qs: string) {
    const res = await svc.app.inject({
      method: 'GET',
      url: `/organizations/${m.orgId}/balance/history?${qs}`,
      headers: m.headers,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{
      history: {
        start: string;
        end: string;
        credits_wei: string;
        debits_wei: string;
        closing_balance_wei: string;
      }[];
      next: string;
      has_more: boolean;
    }>();
  }
  const w = (tokens: string) => parseTokens(tokens).toString();

  it('buckets credits, debits and closing balances by day, newest first', async () => {
    const body = await history('interval=day&time-range=week');
    expect(body.history).toEqual([
      {
        start: '2026-03-13T00:00:00.000Z',
        end: '2026-03-14T00:00:00.000Z',
        credits_wei: w('2'),
        debits_wei: '0',
        closing_balance_wei: w('10.5'),
      },
      {
        start: '2026-03-12T00:00:00.000Z',
        end: '2026-03-13T00:00:00.000Z',
        credits_wei: '0',
        debits_wei: '0',
        closing_balance_wei: w('8.5'),
      },
      {
        start: '2026-03-11T00:00:00.000Z',
        end: '2026-03-12T00:00:00.000Z',
        credits_wei: '0',
        debits_wei: w('1.5'),
        closing_balance_wei: w('8.5'),
      },
      {
        start: '2026-03-10T00:00:00.000Z',
        end: '2026-03-11T00:00:00.000Z',
        credits_wei: w('10'),
        debits_wei: '0',
        closing_balance_wei: w('10'),
      },
    ]);
    expect(body).toMatchObject({ next: '', has_more: false });
  });

  it('pages with limit and next in both orders', async () => {
    const first = await history('interval=day&time-range=week&limit=3');
    expect(first.history.map((b) => b.start.slice(0, 10))).toEqual([
      '2026-03-13',
      '2026-03-12',
      '2026-03-11',
    ]);
    expect(first.has_more).toBe(true);
    const rest = await history(`interval=day&time-range=week&limit=3&next=${first.next}`);
    expect(rest.history.map((b) => [b.start.slice(0, 10), b.closing_balance_wei])).toEqual([
      ['2026-03-10', w('10')],
    ]);
    expect(rest.has_more).toBe(false);

    const asc = await history('interval=day&time-range=week&limit=2&order=asc');
    expect(asc.history.map((b) => b.closing_balance_wei)).toEqual([w('10'), w('8.5')]);
    const asc2 = await history(`interval=day&time-range=week&limit=2&order=asc&next=${asc.next}`);
    expect(asc2.history.map((b) => b.closing_balance_wei)).toEqual([w('8.5'), w('10.5')]);
  });

  it('narrows the range with the date filters and buckets by hour', async () => {
    const body = await history(
      'interval=hour&when_created[$gte]=2026-03-11T08:30:00Z&when_created[$lt]=2026-03-11T11:00:00Z',
    );
    expect(
      body.history.map((b) => [b.start.slice(11, 16), b.debits_wei, b.closing_balance_wei]),
    ).toEqual([
      ['10:00', w('0.5'), w('8.5')],
      ['09:00', w('1'), w('9')],
      ['08:00', '0', w('10')],
    ]);
  });

  it('buckets by week (from Monday) and by month, and covers the whole life with time-range=all', async () => {
    const week = await history('interval=week&time-range=all');
    expect(week.history).toEqual([
      {
        start: '2026-03-09T00:00:00.000Z',
        end: '2026-03-16T00:00:00.000Z',
        credits_wei: w('12'),
        debits_wei: w('1.5'),
        closing_balance_wei: w('10.5'),
      },
    ]);
    const month = await history('interval=month&time-range=year');
    expect(month.history.map((b) => [b.start, b.end])).toEqual([
      ['2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ]);
    const day = await history('interval=day&time-range=day');
    expect(day.history.map((b) => b.start.slice(0, 10))).toEqual(['2026-03-13', '2026-03-12']);
  });

  it('refuses a bad interval, time-range, limit or date with 400 code 3', async () => {
    for (const qs of [
      'interval=minute',
      'time-range=decade',
      'limit=101',
      'limit=0',
      'when_created[$gt]=yesterday',
      'next=bogus',
    ]) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/organizations/${m.orgId}/balance/history?${qs}`,
        headers: m.headers,
      });
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });
});
