import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/pool.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { formatTokens, NATIVE_TOKEN } from '../../lib/money.js';

export type LedgerKind = 'deposit' | 'action_fee' | 'adjustment';

export interface LedgerEntryInput {
  orgId: string;
  kind: LedgerKind;
  /** Signed: credits positive, debits negative. */
  amountWei: bigint;
  /** What caused it: a deposit id, an action id, an operator note id. */
  refId: string | null;
  now: Date;
}

export interface LedgerEntry {
  id: string;
  balanceAfterWei: bigint;
}

/** 402 code 9: the organization cannot pay (design.md §3). */
export function insufficientBalance(balanceWei: bigint, neededWei: bigint): AppError {
  return new AppError(
    Code.FAILED_PRECONDITION,
    `insufficient balance: ${formatTokens(neededWei)} ${NATIVE_TOKEN} needed, ` +
      `${formatTokens(balanceWei)} ${NATIVE_TOKEN} available`,
    { balance_wei: balanceWei.toString(), required_wei: neededWei.toString() },
    402,
  );
}

type BalanceRow = { balance_wei: string };

/**
 * The one way a balance changes. Call it inside the transaction of the change's cause
 * (a deposit, an action), so the balance and its ledger row commit or vanish together.
 * The balance update is a single guarded statement: concurrent callers queue on the
 * organization row, and a debit that would go below zero changes nothing and throws
 * 402 code 9 (the caller's transaction should then roll back, as with any AppError).
 */
export async function recordLedgerEntry(
  tx: Executor,
  entry: LedgerEntryInput,
): Promise<LedgerEntry> {
  const { rows } = await tx.execute<BalanceRow>(sql`
    UPDATE organizations SET balance_wei = balance_wei + ${entry.amountWei.toString()}::numeric
    WHERE id = ${entry.orgId} AND balance_wei + ${entry.amountWei.toString()}::numeric >= 0
    RETURNING balance_wei`);
  const updated = rows[0];
  if (!updated) {
    const current = await tx.execute<BalanceRow>(
      sql`SELECT balance_wei FROM organizations WHERE id = ${entry.orgId}`,
    );
    const row = current.rows[0];
    if (!row) throw notFound('organization');
    throw insufficientBalance(BigInt(row.balance_wei), -entry.amountWei);
  }
  const id = newId('ledger');
  await tx.execute(sql`INSERT INTO ledger_entries
    (id, organization_id, kind, amount_wei, balance_after_wei, ref_id, created_at)
    VALUES (${id}, ${entry.orgId}, ${entry.kind}, ${entry.amountWei.toString()}::numeric,
      ${updated.balance_wei}::numeric, ${entry.refId}, ${entry.now})`);
  return { id, balanceAfterWei: BigInt(updated.balance_wei) };
}
