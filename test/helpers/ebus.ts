import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { newId } from '../../src/lib/ids.js';
import type { Role } from '../../src/lib/permissions.js';
import { buildActionText, webauthnChallenge } from '../../src/modules/ebus/action-text.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';
import { createMember, type TestMember } from './fixtures.js';
import type { TestService } from './service.js';

/** The price of one action under the config defaults: 1e15 fixed + 1e17 / 1000 proving. */
export const ACTION_FEE = 1_100_000_000_000_000n;

/** A member whose wallet signs actions with an EOA (its address is the EOA's). */
export interface EoaSigner extends TestMember {
  account: PrivateKeyAccount;
}

/** A member whose wallet signs actions with a passkey. */
export interface PasskeySigner extends TestMember {
  authenticator: SoftAuthenticator;
  credentialRowId: string;
}

export interface UnsignedAction {
  wallet: string;
  name: string;
  params: Record<string, unknown>;
  nonce: number;
  expires: string;
}

/** A wallet (address = a fresh EOA's), an `eoa` credential, active in `orgId` with `role`. */
export async function createSigner(
  svc: TestService,
  opts: { orgId?: string; role?: Role; privateKey?: Hex } = {},
): Promise<EoaSigner> {
  const account = privateKeyToAccount(opts.privateKey ?? generatePrivateKey());
  const member = await createMember(svc, {
    orgId: opts.orgId,
    role: opts.role ?? 'owner',
    address: account.address.toLowerCase(),
  });
  await svc.container.db
    .execute(sql`INSERT INTO credentials (id, wallet_id, type, external_id, created_at)
    VALUES (${newId('credential')}, ${member.walletId}, 'eoa', ${member.address}, ${svc.clock.now()})`);
  return { ...member, account };
}

/** A wallet with a derived address and a registered passkey (SoftAuthenticator). */
export async function createPasskeySigner(
  svc: TestService,
  opts: { orgId?: string; role?: Role } = {},
): Promise<PasskeySigner> {
  const member = await createMember(svc, { orgId: opts.orgId, role: opts.role ?? 'owner' });
  const origin = svc.config.webauthn.origins[0]!;
  const authenticator = new SoftAuthenticator({ origin, rpId: svc.config.webauthn.rpId });
  authenticator.createCredential({
    challenge: 'cmVnaXN0ZXI',
    rp: { id: svc.config.webauthn.rpId },
    user: { id: Buffer.from(member.walletId).toString('base64url') },
  });
  const credentialRowId = newId('credential');
  await svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, public_key, sign_count, created_at)
    VALUES (${credentialRowId}, ${member.walletId}, 'passkey', ${authenticator.credentialId},
      ${Buffer.from(authenticator.publicKeyCose)}, 0, ${svc.clock.now()})`);
  return { ...member, authenticator, credentialRowId };
}

/** Credits an organization: a deposit ledger row and the balance, in one statement. */
export async function fund(svc: TestService, orgId: string, wei: bigint): Promise<void> {
  await svc.container.db.execute(sql`
    WITH credited AS (
      UPDATE organizations SET balance_wei = balance_wei + ${wei.toString()}::numeric
      WHERE id = ${orgId} RETURNING balance_wei)
    INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, created_at)
    SELECT ${newId('ledger')}, ${orgId}, 'deposit', ${wei.toString()}::numeric, balance_wei, ${svc.clock.now()}
    FROM credited`);
}

export async function createTemplate(
  svc: TestService,
  orgId: string,
  opts: {
    actions?: string[];
    faces?: unknown[];
    customSchema?: Record<string, unknown>;
    isPublic?: boolean;
    id?: string;
  } = {},
): Promise<string> {
  const id = opts.id ?? newId('template');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO templates
      (id, organization_id, name, description, category, faces, actions, custom_schema, is_public, created_at, updated_at)
    VALUES (${id}, ${orgId}, 'Ticket', 'A test template', 'tickets',
      ${JSON.stringify(opts.faces ?? [{ id: 'front', url: 'https://x.test/f.png', config: {}, content: '' }])}::jsonb,
      ${`{${(opts.actions ?? ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup']).join(',')}}`}::text[],
      ${opts.customSchema ? JSON.stringify(opts.customSchema) : null}::jsonb,
      ${opts.isPublic ?? true}, ${now}, ${now})`);
  return id;
}

/** The text of an action for `orgId` (the same bytes the service builds). */
export function textOf(svc: TestService, orgId: string, a: UnsignedAction): string {
  return buildActionText({
    network: svc.config.networkId,
    organizationId: orgId,
    ...a,
  });
}

/** An execute body signed by an EOA signer. */
export async function signEoa(
  svc: TestService,
  signer: EoaSigner,
  a: Omit<UnsignedAction, 'wallet' | 'expires'> & { expires?: string; wallet?: string },
  opts: { orgId?: string; maxFeeWei?: string } = {},
) {
  const action: UnsignedAction = {
    wallet: a.wallet ?? signer.address,
    name: a.name,
    params: a.params,
    nonce: a.nonce,
    expires: a.expires ?? new Date(svc.clock.now().getTime() + 5 * 60_000).toISOString(),
  };
  const text = textOf(svc, opts.orgId ?? signer.orgId, action);
  const signature = await signer.account.signMessage({ message: text });
  return {
    action,
    signature: { type: 'eoa' as const, signature },
    ...(opts.maxFeeWei !== undefined ? { max_fee_wei: opts.maxFeeWei } : {}),
  };
}

/** An execute body signed by a passkey signer. */
export function signPasskey(
  svc: TestService,
  signer: PasskeySigner,
  a: Omit<UnsignedAction, 'wallet' | 'expires'> & { expires?: string },
) {
  const action: UnsignedAction = {
    wallet: signer.address,
    name: a.name,
    params: a.params,
    nonce: a.nonce,
    expires: a.expires ?? new Date(svc.clock.now().getTime() + 5 * 60_000).toISOString(),
  };
  const challenge = webauthnChallenge(textOf(svc, signer.orgId, action));
  const credential = signer.authenticator.getAssertion({ challenge });
  return { action, signature: { type: 'webauthn' as const, credential } };
}

/** What a refused action must leave untouched. */
export async function snapshot(
  svc: TestService,
  orgId: string,
  walletId: string,
  objectId?: string,
) {
  const db = svc.container.db;
  const one = async (q: ReturnType<typeof sql>) => (await db.execute(q)).rows[0];
  return {
    balance: await one(sql`SELECT balance_wei::text AS b FROM organizations WHERE id = ${orgId}`),
    ledger: await one(
      sql`SELECT count(*)::int AS n FROM ledger_entries WHERE organization_id = ${orgId}`,
    ),
    nonce: await one(sql`SELECT next_nonce::int FROM wallets WHERE id = ${walletId}`),
    logs: await one(sql`SELECT count(*)::int AS n FROM action_logs`),
    objects: await one(sql`SELECT count(*)::int AS n FROM objects`),
    object: objectId ? await one(sql`SELECT * FROM objects WHERE id = ${objectId}`) : null,
  };
}
