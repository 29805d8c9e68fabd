import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import type { DbTime } from '../../db/values.js';
import {
  and,
  dateFilters,
  keysetCondition,
  orderBy,
  type ListSpec,
  type ParsedList,
  byCreation,
} from '../../lib/list.js';

export type DepositRow = {
  id: string;
  organization_id: string;
  tx_hash: string;
  token: string;
  token_address: string | null;
  amount_wei: string;
  created_at: DbTime;
};

export const DEPOSIT_LIST: ListSpec = byCreation();

export interface DepositFilters {
  id?: string;
  txHash?: string;
  token?: string;
  tokenAddress?: string;
  dates: Record<string, unknown>;
}

export async function listDeposits(
  exec: Executor,
  orgId: string,
  f: DepositFilters,
  p: ParsedList,
): Promise<DepositRow[]> {
  const where = and([
    sql`organization_id = ${orgId}`,
    f.id !== undefined ? sql`id = ${f.id}` : undefined,
    f.txHash !== undefined ? sql`tx_hash = ${f.txHash.toLowerCase()}` : undefined,
    f.token !== undefined ? sql`token = ${f.token}` : undefined,
    f.tokenAddress !== undefined ? sql`token_address = ${f.tokenAddress.toLowerCase()}` : undefined,
    ...dateFilters(f.dates, sql`created_at`),
    keysetCondition(p),
  ]);
  const { rows } = await exec.execute<DepositRow>(sql`SELECT id, organization_id, tx_hash, token,
      token_address, amount_wei, created_at
    FROM deposits WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`);
  return rows;
}

/** Inserts the deposit unless its tx_hash is known; null when it was already there. */
export async function insertDepositOnce(exec: Executor, d: DepositRow): Promise<string | null> {
  const { rows } = await exec.execute<{ id: string }>(sql`INSERT INTO deposits
    (id, organization_id, tx_hash, token, token_address, amount_wei, created_at)
    VALUES (${d.id}, ${d.organization_id}, ${d.tx_hash}, ${d.token}, ${d.token_address},
      ${d.amount_wei}::numeric, ${d.created_at})
    ON CONFLICT (tx_hash) DO NOTHING RETURNING id`);
  return rows[0]?.id ?? null;
}

export async function findByTxHash(exec: Executor, txHash: string): Promise<DepositRow | null> {
  const { rows } = await exec.execute<DepositRow>(sql`SELECT id, organization_id, tx_hash, token,
      token_address, amount_wei, created_at
    FROM deposits WHERE tx_hash = ${txHash}`);
  return rows[0] ?? null;
}

/** The live organization a deposit is for (locked with the balance update that follows). */
export async function organizationIsLive(exec: Executor, orgId: string): Promise<boolean> {
  const { rows } = await exec.execute<{ id: string }>(
    sql`SELECT id FROM organizations WHERE id = ${orgId} AND deleted_at IS NULL FOR NO KEY UPDATE`,
  );
  return rows.length > 0;
}
