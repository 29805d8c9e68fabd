import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';

// Wallets are not owned by one organization (a wallet is a member of many), so these
// queries are scoped by wallet id instead; membership queries name the organization.

export type WalletRow = {
  id: string;
  address: string;
  email: string | null;
  phone_number: string | null;
  name: string | null;
  password_hash: string | null;
  email_confirmed_at: Date | string | null;
  phone_confirmed_at: Date | string | null;
  default_org_id: string | null;
  created_at: Date | string;
};

export type CredentialType = 'password' | 'passkey' | 'eoa' | 'google';

export type CredentialRow = {
  id: string;
  wallet_id: string;
  type: CredentialType;
  label: string;
  external_id: string | null;
  public_key: Buffer | null;
  /** int8: text from Drizzle's execute; read it with Number(). */
  sign_count: number | string;
  transports: string[];
  created_at: Date | string;
};

export type OrganizationRow = { id: string; allow_self_signup: boolean };

const WALLET_COLUMNS = sql`id, address, email, phone_number, name, password_hash,
  email_confirmed_at, phone_confirmed_at, default_org_id, created_at`;

export interface NewWallet {
  id: string;
  address: string;
  email: string | null;
  phoneNumber: string | null;
  name: string | null;
  passwordHash: string | null;
  emailConfirmedAt: Date | null;
  now: Date;
}

export async function insertWallet(exec: Executor, w: NewWallet): Promise<void> {
  await exec.execute(sql`INSERT INTO wallets (id, address, email, phone_number, name,
      password_hash, email_confirmed_at, created_at, updated_at)
    VALUES (${w.id}, ${w.address}, ${w.email}, ${w.phoneNumber}, ${w.name}, ${w.passwordHash},
      ${w.emailConfirmedAt}, ${w.now}, ${w.now})`);
}

export async function findWallet(
  exec: Executor,
  by: { id: string } | { email: string } | { phoneNumber: string },
  forUpdate = false,
): Promise<WalletRow | null> {
  const where =
    'id' in by
      ? sql`id = ${by.id}`
      : 'email' in by
        ? sql`email = ${by.email}`
        : sql`phone_number = ${by.phoneNumber}`;
  const lock = forUpdate ? sql`FOR UPDATE` : sql``;
  const { rows } = await exec.execute<WalletRow>(
    sql`SELECT ${WALLET_COLUMNS} FROM wallets WHERE ${where} ${lock}`,
  );
  return rows[0] ?? null;
}

export async function setPasswordHash(
  exec: Executor,
  walletId: string,
  hash: string | null,
  now: Date,
) {
  await exec.execute(
    sql`UPDATE wallets SET password_hash = ${hash}, updated_at = ${now} WHERE id = ${walletId}`,
  );
}

export async function confirmContact(
  exec: Executor,
  walletId: string,
  channel: 'email' | 'sms',
  now: Date,
): Promise<void> {
  const column = channel === 'email' ? sql`email_confirmed_at` : sql`phone_confirmed_at`;
  await exec.execute(sql`UPDATE wallets SET ${column} = COALESCE(${column}, ${now}),
    updated_at = ${now} WHERE id = ${walletId}`);
}

export async function setDefaultOrganization(exec: Executor, walletId: string, orgId: string) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}
    WHERE id = ${walletId} AND default_org_id IS DISTINCT FROM ${orgId}`);
}

/** Accepted invitations sent to this email before the wallet existed now belong to it. */
export async function bindInvitations(exec: Executor, walletId: string, email: string, now: Date) {
  await exec.execute(sql`UPDATE members SET wallet_id = ${walletId}, updated_at = ${now}
    WHERE lower(email) = ${email} AND wallet_id IS NULL AND status = 'active'`);
}

export interface NewCredential {
  id: string;
  walletId: string;
  type: CredentialType;
  label: string;
  externalId: string | null;
  publicKey?: Uint8Array | null;
  signCount?: number;
  transports?: string[];
  now: Date;
}

export async function insertCredential(exec: Executor, c: NewCredential): Promise<void> {
  const key = c.publicKey ? Buffer.from(c.publicKey) : null;
  await exec.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, label, external_id, public_key, sign_count, transports, created_at)
    VALUES (${c.id}, ${c.walletId}, ${c.type}, ${c.label}, ${c.externalId}, ${key},
      ${c.signCount ?? 0},
      ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(c.transports ?? [])}::jsonb)),
      ${c.now})`);
}

const CREDENTIAL_COLUMNS = sql`id, wallet_id, type, label, external_id, public_key, sign_count,
  transports, created_at`;

export async function findCredentialByExternalId(
  exec: Executor,
  type: CredentialType,
  externalId: string,
): Promise<CredentialRow | null> {
  const { rows } = await exec.execute<CredentialRow>(sql`SELECT ${CREDENTIAL_COLUMNS}
    FROM credentials WHERE type = ${type} AND external_id = ${externalId} AND removed_at IS NULL`);
  return rows[0] ?? null;
}

export async function listCredentials(exec: Executor, walletId: string): Promise<CredentialRow[]> {
  const { rows } = await exec.execute<CredentialRow>(sql`SELECT ${CREDENTIAL_COLUMNS}
    FROM credentials WHERE wallet_id = ${walletId} AND removed_at IS NULL
    ORDER BY created_at, id`);
  return rows;
}

export async function removeCredential(exec: Executor, walletId: string, id: string, now: Date) {
  await exec.execute(sql`UPDATE credentials SET removed_at = ${now}
    WHERE id = ${id} AND wallet_id = ${walletId} AND removed_at IS NULL`);
}

export async function updateSignCount(exec: Executor, id: string, signCount: number) {
  await exec.execute(sql`UPDATE credentials SET sign_count = ${signCount} WHERE id = ${id}`);
}

export async function findOrganization(
  exec: Executor,
  orgId: string,
): Promise<OrganizationRow | null> {
  const { rows } = await exec.execute<OrganizationRow>(sql`SELECT id,
      COALESCE((settings->>'allow_self_signup')::boolean, false) AS allow_self_signup
    FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL`);
  return rows[0] ?? null;
}

export async function activeRole(exec: Executor, orgId: string, walletId: string) {
  const { rows } = await exec.execute<{ role: string }>(sql`SELECT role FROM members
    WHERE organization_id = ${orgId} AND wallet_id = ${walletId} AND status = 'active'`);
  return rows[0]?.role ?? null;
}

export async function insertMember(
  exec: Executor,
  m: {
    id: string;
    orgId: string;
    walletId: string;
    email: string | null;
    name: string | null;
    now: Date;
  },
) {
  await exec.execute(sql`INSERT INTO members
      (id, organization_id, wallet_id, email, name, role, status, created_at, updated_at)
    VALUES (${m.id}, ${m.orgId}, ${m.walletId}, ${m.email}, ${m.name}, 'member', 'active',
      ${m.now}, ${m.now})`);
}
