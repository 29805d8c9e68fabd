import { sql, type SQL } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { Contact } from './contact.js';

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
  by: { id: string },
  forUpdate = false,
): Promise<WalletRow | null> {
  const lock = forUpdate ? sql`FOR UPDATE` : sql``;
  const { rows } = await exec.execute<WalletRow>(
    sql`SELECT ${WALLET_COLUMNS} FROM wallets WHERE id = ${by.id} ${lock}`,
  );
  return rows[0] ?? null;
}

// An address is HELD by the one wallet that confirmed it and NAMED, unconfirmed, by any
// number of others (migration 0012).
const addressColumns = (c: Contact) =>
  c.channel === 'email'
    ? { column: sql`email`, confirmed: sql`email_confirmed_at`, value: c.email }
    : { column: sql`phone_number`, confirmed: sql`phone_confirmed_at`, value: c.phoneNumber };

/** The wallet that confirmed this address, if one did. */
export async function findHolder(exec: Executor, c: Contact): Promise<WalletRow | null> {
  const a = addressColumns(c);
  const { rows } = await exec.execute<WalletRow>(sql`SELECT ${WALLET_COLUMNS} FROM wallets
    WHERE ${a.column} = ${a.value} AND ${a.confirmed} IS NOT NULL`);
  return rows[0] ?? null;
}

/**
 * Wallets naming this address: its holder first, then the unconfirmed ones, oldest first.
 * The first is "the account of the address" for the flows that prove it with a code.
 */
export async function findNaming(exec: Executor, c: Contact, limit: number): Promise<WalletRow[]> {
  const a = addressColumns(c);
  const { rows } = await exec.execute<WalletRow>(sql`SELECT ${WALLET_COLUMNS} FROM wallets
    WHERE ${a.column} = ${a.value}
    ORDER BY ${a.confirmed} IS NULL, created_at, id LIMIT ${limit}`);
  return rows;
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

export type Confirmation = 'confirmed' | 'already' | 'held' | 'none';

/**
 * Marks the wallet's email (or phone number) confirmed unless another wallet holds it:
 * `confirmed` (now), `already` (it was), `held` (another wallet confirmed it first) or
 * `none` (the wallet has no such address). A concurrent confirmation of the same address by
 * another wallet raises a unique violation of `wallets_email_held` / `wallets_phone_held`.
 */
export async function confirmAddress(
  exec: Executor,
  walletId: string,
  channel: 'email' | 'sms',
  now: Date,
): Promise<Confirmation> {
  const column = channel === 'email' ? sql`email` : sql`phone_number`;
  const confirmed = channel === 'email' ? sql`email_confirmed_at` : sql`phone_confirmed_at`;
  const { rows } = await exec.execute<{ id: string }>(sql`UPDATE wallets w
    SET ${confirmed} = ${now}, updated_at = ${now}
    WHERE w.id = ${walletId} AND w.${column} IS NOT NULL AND w.${confirmed} IS NULL
      AND NOT EXISTS (SELECT 1 FROM wallets o
        WHERE o.${column} = w.${column} AND o.${confirmed} IS NOT NULL)
    RETURNING w.id`);
  if (rows.length === 1) return 'confirmed';
  const { rows: state } = await exec.execute<{ address: string | null; at: unknown }>(
    sql`SELECT ${column} AS address, ${confirmed} AS at FROM wallets WHERE id = ${walletId}`,
  );
  const row = state[0];
  if (!row || row.address === null) return 'none';
  return row.at !== null ? 'already' : 'held';
}

/**
 * Drops every address of the wallet but the one of `kept`'s channel, with its confirmation
 * (the hand-over of a wallet to the owner of the address just proven). Answers the channels
 * of the addresses it dropped.
 */
export async function dropAddressesExcept(
  exec: Executor,
  walletId: string,
  kept: 'email' | 'sms',
  now: Date,
): Promise<('email' | 'sms')[]> {
  const other = kept === 'email' ? 'sms' : 'email';
  const column = other === 'email' ? sql`email` : sql`phone_number`;
  const confirmed = other === 'email' ? sql`email_confirmed_at` : sql`phone_confirmed_at`;
  const { rows } = await exec.execute<{ id: string }>(sql`UPDATE wallets
    SET ${column} = NULL, ${confirmed} = NULL, updated_at = ${now}
    WHERE id = ${walletId} AND (${column} IS NOT NULL OR ${confirmed} IS NOT NULL)
    RETURNING id`);
  return rows.length === 1 ? [other] : [];
}

export async function setDefaultOrganization(exec: Executor, walletId: string, orgId: string) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}
    WHERE id = ${walletId} AND default_org_id IS DISTINCT FROM ${orgId}`);
}

/** Makes `orgId` the wallet's default context when it has none yet (a standalone account). */
export async function setDefaultOrgIfNone(exec: Executor, walletId: string, orgId: string) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}
    WHERE id = ${walletId} AND default_org_id IS NULL`);
}

/** Makes `orgId` the wallet's default context (an organization switch). */
export async function setDefaultOrg(exec: Executor, walletId: string, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = ${orgId}, updated_at = ${now}
    WHERE id = ${walletId}`);
}

/** No wallet signs in to a deleted organization by default any more. */
export async function clearDefaultOrgEverywhere(exec: Executor, orgId: string, now: Date) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = NULL, updated_at = ${now}
    WHERE default_org_id = ${orgId}`);
}

/** The wallet no longer signs in to any organization by default. */
export async function clearDefaultOrganization(exec: Executor, walletId: string, now: Date) {
  await exec.execute(sql`UPDATE wallets SET default_org_id = NULL, updated_at = ${now}
    WHERE id = ${walletId} AND default_org_id IS NOT NULL`);
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

/**
 * The passkey with this credential id that signed at least one action on an object that is
 * public now (removed or not: the actions it signed stay checkable), with its wallet's
 * address; the latest one when the id was registered again after a removal. Its actions on
 * private objects do not count: those are published as salted commitments only, so they
 * tie nothing to the wallet (docs/decisions.md). The EXISTS walks the wallet's own actions
 * only (index `UNIQUE (wallet_id, nonce)`).
 */
export async function findSigningPasskey(
  exec: Executor,
  credentialId: string,
): Promise<{
  external_id: string;
  public_key: Buffer;
  address: string;
  created_at: Date | string;
  removed_at: Date | string | null;
} | null> {
  const { rows } = await exec.execute<{
    external_id: string;
    public_key: Buffer;
    address: string;
    created_at: Date | string;
    removed_at: Date | string | null;
  }>(sql`
    SELECT c.external_id, c.public_key, w.address, c.created_at, c.removed_at
    FROM credentials c JOIN wallets w ON w.id = c.wallet_id
    WHERE c.type = 'passkey' AND c.external_id = ${credentialId} AND c.public_key IS NOT NULL
      AND EXISTS (SELECT 1 FROM action_logs a JOIN objects o ON o.id = a.object_id AND o.is_public
        WHERE a.wallet_id = c.wallet_id
        AND a.signature_type = 'webauthn' AND a.signature ->> 'credential_id' = ${credentialId})
    ORDER BY c.created_at DESC LIMIT 1`);
  return rows[0] ?? null;
}

/**
 * Every link of the EOA `signer` to the wallet whose address is `wallet` (removed ones
 * included), oldest first; none unless the wallet signed at least one action with an EOA on
 * an object that is public now (its actions on private objects tie nothing to it publicly).
 */
export async function findSignerLinks(
  exec: Executor,
  wallet: string,
  signer: string,
): Promise<{ created_at: Date | string; removed_at: Date | string | null }[]> {
  const { rows } = await exec.execute<{
    created_at: Date | string;
    removed_at: Date | string | null;
  }>(sql`
    SELECT c.created_at, c.removed_at
    FROM wallets w JOIN credentials c
      ON c.wallet_id = w.id AND c.type = 'eoa' AND c.external_id = ${signer}
    WHERE w.address = ${wallet}
      AND EXISTS (SELECT 1 FROM action_logs a JOIN objects o ON o.id = a.object_id AND o.is_public
        WHERE a.wallet_id = w.id AND a.signature_type = 'eoa')
    ORDER BY c.created_at, c.id`);
  return rows;
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

/**
 * Removes every credential of the wallet but those of the `keep` types and the EOA that is
 * its own address (which never changes hands).
 */
export async function removeCredentialsExcept(
  exec: Executor,
  walletId: string,
  keep: CredentialType[],
  now: Date,
): Promise<void> {
  await exec.execute(sql`UPDATE credentials c SET removed_at = ${now}
    WHERE c.wallet_id = ${walletId} AND c.removed_at IS NULL
      AND NOT (c.type = ANY(${`{${keep.join(',')}}`}::text[]))
      AND NOT (c.type = 'eoa' AND c.external_id = (SELECT address FROM wallets WHERE id = ${walletId}))`);
}

/** Raises a passkey's sign count, never lowers it (two sign-ins may record out of order). */
export async function updateSignCount(exec: Executor, id: string, signCount: number) {
  await exec.execute(sql`UPDATE credentials SET sign_count = GREATEST(sign_count, ${signCount})
    WHERE id = ${id}`);
}

/** Notices of this kind sent to this address since `since`. */
export async function countNoticesSince(
  exec: Executor,
  recipient: string,
  kind: string,
  since: Date,
): Promise<number> {
  const { rows } = await exec.execute<{ n: number }>(sql`SELECT count(*)::int AS n
    FROM address_notices WHERE recipient = ${recipient} AND kind = ${kind}
      AND created_at > ${since}`);
  return rows[0]?.n ?? 0;
}

export async function insertNotice(
  exec: Executor,
  n: { id: string; recipient: string; kind: string; now: Date },
): Promise<void> {
  await exec.execute(sql`INSERT INTO address_notices (id, recipient, kind, created_at)
    VALUES (${n.id}, ${n.recipient}, ${n.kind}, ${n.now})`);
}

/**
 * The group statement's (ebus/repo/group-write.ts) advance of the signer wallets' nonces,
 * each guarded by the nonce it read, given JSON rows `(id, expected, next_nonce)`.
 */
export function advanceNonces(rows: SQL): SQL {
  return sql`UPDATE wallets wl SET next_nonce = r.next_nonce
      FROM jsonb_to_recordset(${rows}) AS r(id text, expected bigint, next_nonce bigint)
      WHERE wl.id = r.id AND wl.next_nonce = r.expected
      RETURNING 1`;
}

/**
 * The group statement's update of the signing passkeys' sign counts (never lowered), given
 * JSON rows `(id, sign_count)`.
 */
export function raiseSignCounts(rows: SQL): SQL {
  return sql`UPDATE credentials c SET sign_count = GREATEST(c.sign_count, r.sign_count)
      FROM jsonb_to_recordset(${rows}) AS r(id text, sign_count bigint)
      WHERE c.id = r.id
      RETURNING 1`;
}
