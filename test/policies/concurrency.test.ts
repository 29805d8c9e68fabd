/**
 * Spend policies under concurrency (docs/policies.md): 1,000 actions sent at once against a
 * cap apply exactly as many as fit (overshoot 0), within one service and across two service
 * processes on one database. Each action is signed by a wallet of its own, so no refusal
 * other than the policy's (a nonce out of order, say) can stop one: every action would
 * apply without the cap.
 */
import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { ACTION_FEE, createSigner, createTemplate, fund, textOf } from '../helpers/ebus.js';
import { spawnService } from '../helpers/processes.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
const children: ChildProcess[] = [];
const ACTIONS = 1_000;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await svc?.stop();
});

/** An organization with an owner, a template, a large balance and `n` signed mints. */
async function world(n: number) {
  const owner = await createSigner(svc);
  await fund(svc, owner.orgId, ACTION_FEE * BigInt(n) * 10n);
  const templateId = await createTemplate(svc, owner.orgId);
  const now = svc.clock.now();
  const accounts = Array.from({ length: n }, () => privateKeyToAccount(generatePrivateKey()));
  const wallets = accounts.map((a) => ({
    id: newId('wallet'),
    address: a.address.toLowerCase(),
    member: newId('member'),
    credential: newId('credential'),
  }));
  const rows = JSON.stringify(wallets);
  await svc.container.db.execute(sql`INSERT INTO wallets (id, address, created_at, updated_at)
    SELECT r.id, r.address, ${now}, ${now}
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, address text)`);
  await svc.container.db.execute(sql`INSERT INTO members
      (id, organization_id, wallet_id, email, role, status, created_at, updated_at)
    SELECT r.member, ${owner.orgId}, r.id, r.id || '@load.test', 'member', 'active', ${now}, ${now}
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, member text)`);
  await svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, created_at)
    SELECT r.credential, r.id, 'eoa', r.address, ${now}
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, address text, credential text)`);
  const expires = new Date(now.getTime() + 10 * 60_000).toISOString();
  const bodies = await Promise.all(
    accounts.map(async (account, i) => {
      const action = {
        wallet: wallets[i]!.address,
        name: 'mint',
        params: { template_id: templateId },
        nonce: 0,
        expires,
      };
      const signature = await account.signMessage({ message: textOf(svc, owner.orgId, action) });
      return { action, signature: { type: 'eoa' as const, signature } };
    }),
  );
  return { owner, orgId: owner.orgId, bodies };
}

async function policy(owner: { headers: Record<string, string> }, body: object) {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/policies',
    headers: owner.headers,
    payload: { name: 'cap', target_type: 'organization', period: 'day', ...body },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ id: string }>().id;
}

/** What was applied, as the database holds it. */
async function applied(orgId: string) {
  const { rows } = await svc.container.db.execute<{ logs: number; spent: string }>(sql`
    SELECT count(*)::int AS logs, coalesce(-sum(l.amount_wei), 0)::text AS spent
    FROM action_logs a JOIN ledger_entries l ON l.ref_id = a.id
    WHERE a.organization_id = ${orgId}`);
  return rows[0]!;
}

function tally(statuses: { status: number; body: string }[], policyId: string) {
  const ok = statuses.filter((s) => s.status === 200).length;
  const refused = statuses.filter((s) => s.status === 403);
  for (const r of refused) {
    const body = JSON.parse(r.body) as { code: number; details: { policy_id: string } };
    expect(body.code).toBe(7);
    expect(body.details.policy_id).toBe(policyId);
  }
  // Nothing else: every action is either applied or refused by the policy.
  expect(
    ok + refused.length,
    JSON.stringify(statuses.find((s) => s.status !== 200 && s.status !== 403)),
  ).toBe(statuses.length);
  return ok;
}

describe('one service', () => {
  it(`${ACTIONS} concurrent actions against a cap of 300 actions: exactly 300 apply`, async () => {
    const w = await world(ACTIONS);
    const id = await policy(w.owner, { max_actions: 300 });
    const answers = await Promise.all(
      w.bodies.map((b) =>
        svc.app.inject({
          method: 'POST',
          url: '/ebus/execute',
          headers: w.owner.headers,
          payload: b,
        }),
      ),
    );
    const ok = tally(
      answers.map((a) => ({ status: a.statusCode, body: a.body })),
      id,
    );
    expect(ok).toBe(300);
    expect(await applied(w.orgId)).toEqual({ logs: 300, spent: (ACTION_FEE * 300n).toString() });
    const view = await svc.app.inject({
      method: 'GET',
      url: `/policies/${id}`,
      headers: w.owner.headers,
    });
    expect(view.json().usage).toMatchObject({ actions: 300 });
  }, 120_000);

  it(`${ACTIONS} concurrent actions against a spend cap of 250.5 fees: exactly 250 apply`, async () => {
    const w = await world(ACTIONS);
    const cap = ACTION_FEE * 250n + ACTION_FEE / 2n;
    const id = await policy(w.owner, { spend_cap_wei: cap.toString() });
    const answers = await Promise.all(
      w.bodies.map((b) =>
        svc.app.inject({
          method: 'POST',
          url: '/ebus/execute',
          headers: w.owner.headers,
          payload: b,
        }),
      ),
    );
    expect(
      tally(
        answers.map((a) => ({ status: a.statusCode, body: a.body })),
        id,
      ),
    ).toBe(250);
    expect(await applied(w.orgId)).toEqual({ logs: 250, spent: (ACTION_FEE * 250n).toString() });
  }, 120_000);
});

describe('two services on one database whose clocks disagree', () => {
  it("a clock more than a minute ahead does not spend a minute's cap again", async () => {
    // This service's (fake) clock is the true one; the other's runs 65 s ahead. The windows
    // end at the database's clock: with each process's own, the other's bucket would be 65
    // buckets on, past the window that holds the first two actions, and it would apply.
    svc.clock.set(new Date());
    const ahead = await startTestService({
      databaseUrl: svc.config.databaseUrl!,
      now: new Date(Date.now() + 65_000),
    });
    try {
      const w = await world(3);
      const id = await policy(w.owner, { period: 'minute', max_actions: 2 });
      const execute = (on: TestService, payload: object) =>
        on.app.inject({ method: 'POST', url: '/ebus/execute', headers: w.owner.headers, payload });
      for (const b of w.bodies.slice(0, 2)) expect((await execute(svc, b)).statusCode).toBe(200);
      const res = await execute(ahead, w.bodies[2]!);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toMatchObject({
        code: 7,
        details: { policy_id: id, limit: 'max_actions', used: '2' },
      });
      expect(await applied(w.orgId)).toEqual({ logs: 2, spent: (ACTION_FEE * 2n).toString() });
    } finally {
      await ahead.stop();
    }
  });
});

describe('two service processes on one database', () => {
  it(`${ACTIONS} concurrent actions split over both against a cap of 400: exactly 400 apply`, async () => {
    const w = await world(ACTIONS);
    const id = await policy(w.owner, { max_actions: 400 });
    // Sockets to one process idle while the other's fifty run; on a loaded machine that can
    // outlast the default 5 s keep-alive, and a POST sent as the server closes its socket
    // fails ("other side closed", not retried): keep them open for the test's length.
    const env = {
      WEBHOOK_DELIVERY: 'false',
      BATCH_SEALER: 'false',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '60000',
    };
    const [a, b] = await Promise.all([spawnService(svc, env), spawnService(svc, env)]);
    children.push(a.child, b.child);
    const send = (body: unknown, at: number) =>
      fetch(`${(at === 0 ? a : b).url}/ebus/execute`, {
        method: 'POST',
        headers: { ...w.owner.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: await res.text(), at }));
    // Fifty through each process in turn first, so both surely apply some whatever the
    // machine's load (the cap is shared, not split); then the rest at once, split over both.
    const first = [
      ...(await Promise.all(w.bodies.slice(0, 50).map((body) => send(body, 0)))),
      ...(await Promise.all(w.bodies.slice(50, 100).map((body) => send(body, 1)))),
    ];
    for (const at of [0, 1]) {
      expect(first.filter((x) => x.at === at && x.status === 200)).toHaveLength(50);
    }
    const rest = await Promise.all(w.bodies.slice(100).map((body, i) => send(body, i % 2)));
    const ok = tally([...first, ...rest], id);
    expect(ok).toBe(400);
    expect(await applied(w.orgId)).toEqual({ logs: 400, spent: (ACTION_FEE * 400n).toString() });
  }, 240_000);
});
