import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { parseTokens } from '../../src/lib/money.js';
import {
  permissionsOfRole,
  type AuthContext,
  type Permission,
  type Role,
} from '../../src/lib/permissions.js';
import type { TestService } from './service.js';

export function randomTxHash(): string {
  return '0x' + randomBytes(32).toString('hex');
}

/** Credits a deposit through the same service the operator command uses. */
export async function deposit(svc: TestService, orgId: string, tokens: string, txHash?: string) {
  return svc.container.deposits.credit({
    orgId,
    amountWei: parseTokens(tokens),
    txHash: txHash ?? randomTxHash(),
    token: 'ONS',
    tokenAddress: null,
  });
}

/** The invariant of the ledger: the stored balance equals the sum of its entries. */
export async function expectBalanceIsLedgerSum(svc: TestService, orgId: string): Promise<bigint> {
  const { rows } = await svc.container.db.execute<{ balance: string; total: string }>(sql`
    SELECT o.balance_wei::text AS balance,
      (SELECT COALESCE(SUM(amount_wei), 0) FROM ledger_entries WHERE organization_id = o.id)::text
        AS total
    FROM organizations o WHERE o.id = ${orgId}`);
  const row = rows[0]!;
  expect(row.balance, `balance of ${orgId} equals the ledger sum`).toBe(row.total);
  return BigInt(row.balance);
}

let keySeq = 0;

/**
 * An API key caller for routes under test. The API-key verifier belongs to another
 * feature; until it lands this stands in for it, so the key rules of these routes
 * (creator becomes owner, wallet_id required, person-only routes) can be tested.
 */
export function fakeApiKey(
  svc: TestService,
  opts: { orgId: string; walletId: string; role?: Role; permissions?: Permission[] },
): Record<string, string> {
  const key = `onsk_test_${++keySeq}_${randomBytes(6).toString('hex')}`;
  const auth: AuthContext = {
    kind: 'api_key',
    walletId: opts.walletId,
    orgId: opts.orgId,
    role: opts.role ?? null,
    permissions: opts.permissions
      ? new Set(opts.permissions)
      : permissionsOfRole(opts.role ?? 'admin'),
    sessionId: null,
    apiKeyId: `key_${keySeq}`,
  };
  const verifiers = svc.container.verifiers;
  const previous = verifiers.apiKey.bind(verifiers);
  verifiers.apiKey = async (value) => (value === key ? { ok: true, auth } : previous(value));
  return { 'x-api-key': key };
}

/** POST /organizations as `headers`; answers the new organization's id. */
export async function postOrganization(
  svc: TestService,
  headers: Record<string, string>,
  payload: Record<string, unknown>,
): Promise<string> {
  const res = await svc.app.inject({ method: 'POST', url: '/organizations', headers, payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id as string;
}

/** The message the default sender stored last for `email`. */
export async function lastMessageTo(svc: TestService, email: string) {
  const { rows } = await svc.container.db.execute<{ kind: string; subject: string; body: string }>(
    sql`SELECT kind, subject, body FROM outbox_messages WHERE recipient = ${email}
        ORDER BY created_at DESC, id DESC LIMIT 1`,
  );
  return rows[0] ?? null;
}

/**
 * A signed-in standalone account: a wallet in no organization yet (docs/auth.md, top), whose email
 * is confirmed (invitations bind only to such a wallet).
 */
export async function createStandaloneAccount(svc: TestService) {
  const { newId } = await import('../../src/lib/ids.js');
  const { addressForWalletId } = await import('../../src/lib/address.js');
  const walletId = newId('wallet');
  const email = `${walletId.toLowerCase()}@example.test`;
  const now = svc.clock.now();
  const db = svc.container.db;
  await db.execute(sql`INSERT INTO wallets
      (id, address, email, email_confirmed_at, created_at, updated_at)
    VALUES (${walletId}, ${addressForWalletId(walletId)}, ${email}, ${now}, ${now}, ${now})`);
  const tokens = await svc.container.sessions.issue(db, { walletId, orgId: null });
  return { walletId, email, headers: { authorization: `Bearer ${tokens.access_token}` } };
}
