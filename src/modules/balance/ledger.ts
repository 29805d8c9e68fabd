import type { Executor } from '../../db/pool.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { formatTokens, NATIVE_TOKEN } from '../../lib/money.js';
import { addToBalance } from '../organizations/index.js';
import { balanceOf, insertLedgerEntry } from './repo.js';

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

/** 402 code 9: the organization cannot pay (docs/api.md, "Answers and errors"). */
export function insufficientBalance(balanceWei: bigint, neededWei: bigint): AppError {
  return new AppError(
    Code.FAILED_PRECONDITION,
    `insufficient balance: ${formatTokens(neededWei)} ${NATIVE_TOKEN} needed, ` +
      `${formatTokens(balanceWei)} ${NATIVE_TOKEN} available`,
    { balance_wei: balanceWei.toString(), required_wei: neededWei.toString() },
    402,
  );
}

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
  const balanceAfterWei = await addToBalance(tx, entry.orgId, entry.amountWei);
  if (balanceAfterWei === null) {
    const current = await balanceOf(tx, entry.orgId);
    if (current === null) throw notFound('organization');
    throw insufficientBalance(current, -entry.amountWei);
  }
  const id = newId('ledger');
  await insertLedgerEntry(tx, { ...entry, id, balanceAfterWei });
  return { id, balanceAfterWei };
}
