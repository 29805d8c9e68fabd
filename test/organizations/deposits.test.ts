import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { runDepositsCommand } from '../../src/modules/deposits/cli.js';
import { createMember } from '../helpers/fixtures.js';
import { deposit, expectBalanceIsLedgerSum, randomTxHash } from '../helpers/orgs.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

const run = (args: string[]) => runDepositsCommand(svc.container.db, args, svc.clock);

describe('deposits credit (operator command)', () => {
  it('credits once: deposit, ledger row and balance together; a second run changes nothing', async () => {
    const m = await createMember(svc);
    const hash = randomTxHash();
    const args = ['credit', '--org', m.orgId, '--amount', '12.5', '--tx-hash', hash];
    const first = await run(args);
    expect(first).toMatch(
      new RegExp(`^credited 12.5 ONS to ${m.orgId} as deposit dep_\\w+; balance now 12.5 ONS$`),
    );
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(125n * 10n ** 17n);
    const second = await run(args);
    expect(second).toMatch(/^already credited: .* nothing changed$/);
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(125n * 10n ** 17n);
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = ${m.orgId}`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('credits exactly once when the same hash is credited concurrently', async () => {
    const m = await createMember(svc);
    const hash = randomTxHash();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => deposit(svc, m.orgId, '1', hash)),
    );
    expect(results.filter((r) => r.status === 'credited')).toHaveLength(1);
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(10n ** 18n);
  });

  it('refuses a known hash with another organization or amount', async () => {
    const a = await createMember(svc);
    const b = await createMember(svc);
    const hash = randomTxHash();
    await run(['credit', '--org', a.orgId, '--amount', '1', '--tx-hash', hash]);
    await expect(
      run(['credit', '--org', b.orgId, '--amount', '1', '--tx-hash', hash]),
    ).rejects.toThrow(/already credited as deposit/);
    await expect(
      run(['credit', '--org', a.orgId, '--amount', '2', '--tx-hash', hash]),
    ).rejects.toThrow(/already credited/);
    expect(await expectBalanceIsLedgerSum(svc, b.orgId)).toBe(0n);
  });

  it('refuses bad amounts, hashes, tokens, addresses and unknown organizations', async () => {
    const m = await createMember(svc);
    const base = ['credit', '--org', m.orgId, '--tx-hash', randomTxHash()];
    for (const [args, message] of [
      [[...base, '--amount', '1.0000000000000000001'], /more than 18 decimal places/],
      [[...base, '--amount=-1'], /not a decimal amount/],
      [[...base, '--amount', '0'], /must be positive/],
      [[...base, '--amount', '1', '--token', 'BTC'], /--token must be one of ONS/],
      [[...base, '--amount', '1', '--token-address', '0x123'], /token address/],
      [['credit', '--org', m.orgId, '--amount', '1', '--tx-hash', '0xabc'], /tx hash/],
      [
        ['credit', '--org', 'org_nope', '--amount', '1', '--tx-hash', randomTxHash()],
        /organization not found/,
      ],
      [['credit', '--org', m.orgId], /needs --org, --amount and --tx-hash/],
      [['debit'], /usage/],
    ] as const) {
      await expect(run([...args]), args.join(' ')).rejects.toThrow(message);
    }
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(0n);
  });

  it('runs as `npm run ons -- deposits credit` against the database', async () => {
    const m = await createMember(svc);
    const hash = randomTxHash();
    const exec = promisify(execFile);
    const cli = ['node_modules/.bin/tsx', 'src/cli/ons.ts', 'deposits', 'credit', '--org', m.orgId];
    const env = { ...process.env, DATABASE_URL: svc.config.databaseUrl!, LOG_LEVEL: 'error' };
    const args = [...cli.slice(1), '--amount', '0.5', '--tx-hash', hash, '--token', 'ONS'];
    const first = await exec(cli[0]!, args, { env });
    expect(first.stdout).toContain('credited 0.5 ONS');
    const second = await exec(cli[0]!, args, { env });
    expect(second.stdout).toContain('already credited');
    expect(await expectBalanceIsLedgerSum(svc, m.orgId)).toBe(5n * 10n ** 17n);
  }, 60_000);
});

describe('GET /payments/deposits', () => {
  it("lists the caller's organization's deposits with their fields, newest first", async () => {
    const m = await createMember(svc, { role: 'member' });
    const other = await createMember(svc);
    await deposit(svc, other.orgId, '9');
    const hash = randomTxHash();
    await svc.container.deposits.credit({
      orgId: m.orgId,
      amountWei: 10n ** 18n,
      txHash: hash.toUpperCase().replace('0X', '0x'),
      token: 'ONS',
      tokenAddress: '0x' + 'AB'.repeat(20),
    });
    svc.clock.advance(1000);
    await deposit(svc, m.orgId, '0.25');
    const res = await svc.app.inject({
      method: 'GET',
      url: '/payments/deposits',
      headers: m.headers,
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.deposits).toHaveLength(2);
    expect(body.deposits[1]).toEqual({
      id: expect.stringMatching(/^dep_/),
      organization_id: m.orgId,
      tx_hash: hash,
      token: 'ONS',
      token_address: '0x' + 'ab'.repeat(20),
      amount_wei: '1000000000000000000',
      amount: '1',
      when_created: expect.any(String),
    });
    expect(body.deposits[0].amount).toBe('0.25');
    expect(body).toMatchObject({ next: '', has_more: false });
  });

  it('filters by id, tx_hash, token, token_address, org-id and dates, and pages', async () => {
    const m = await createMember(svc);
    const hashes: string[] = [];
    const start = svc.clock.now().toISOString();
    for (let i = 0; i < 3; i++) {
      svc.clock.advance(1000);
      hashes.push(randomTxHash());
      await svc.container.deposits.credit({
        orgId: m.orgId,
        amountWei: BigInt(i + 1),
        txHash: hashes[i]!,
        token: 'ONS',
        tokenAddress: i === 0 ? '0x' + '11'.repeat(20) : null,
      });
    }
    const list = async (qs: string) => {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/payments/deposits?${qs}`,
        headers: m.headers,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    expect(
      (await list(`tx_hash=${hashes[1]}`)).deposits.map(
        (d: { amount_wei: string }) => d.amount_wei,
      ),
    ).toEqual(['2']);
    expect((await list(`token_address=0x${'11'.repeat(20)}`)).deposits).toHaveLength(1);
    expect((await list('token=ONS')).deposits).toHaveLength(3);
    const one = (await list('limit=1')).deposits[0];
    expect((await list(`id=${one.id}`)).deposits).toHaveLength(1);
    expect((await list(`org-id=${m.orgId}`)).deposits).toHaveLength(3);
    expect((await list('org-id=org_someone_else')).deposits).toHaveLength(0);
    const after = new Date(Date.parse(start) + 1500).toISOString();
    expect((await list(`when_created[$gte]=${after}`)).deposits).toHaveLength(2);
    expect((await list(`when_created[$lt]=${after}`)).deposits).toHaveLength(1);
    const page1 = await list('limit=2&order=asc');
    expect(page1.has_more).toBe(true);
    const page2 = await list(`limit=2&order=asc&next=${page1.next}`);
    expect(page2.deposits.map((d: { amount_wei: string }) => d.amount_wei)).toEqual(['3']);
  });

  it('refuses an unknown token, a bad limit or date with 400 code 3', async () => {
    const m = await createMember(svc);
    for (const qs of ['token=BTC', 'limit=101', 'when_created[$gt]=soon', 'sortBy=amount']) {
      const res = await svc.app.inject({
        method: 'GET',
        url: `/payments/deposits?${qs}`,
        headers: m.headers,
      });
      expect(res.statusCode, qs).toBe(400);
      expect(res.json().code).toBe(3);
    }
  });

  it('refuses a viewer (no deposits.read) with 403 code 7 and no credential with 401', async () => {
    const v = await createMember(svc, { role: 'viewer' });
    const res = await svc.app.inject({
      method: 'GET',
      url: '/payments/deposits',
      headers: v.headers,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
    const anonymous = await svc.app.inject({ method: 'GET', url: '/payments/deposits' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe(16);
  });

  it('documents the DepositToken enumeration in the OpenAPI description', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const params = doc.paths['/payments/deposits'].get.parameters as {
      name: string;
      schema: unknown;
    }[];
    const token = params.find((p) => p.name === 'token')!;
    expect(JSON.stringify(token.schema)).toContain('"ONS"');
  });
});
