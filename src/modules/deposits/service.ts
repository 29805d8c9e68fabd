import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate, asIso } from '../../db/values.js';
import { conflict, invalid, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { pageOf, parseList, type Page } from '../../lib/list.js';
import { formatTokens } from '../../lib/money.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { recordLedgerEntry } from '../balance/index.js';
import * as repo from './repo.js';
import {
  DEPOSIT_TOKENS,
  type Deposit,
  type DepositTokenName,
  type ListDepositsQuery,
} from './schema.js';

export interface CreditInput {
  orgId: string;
  amountWei: bigint;
  txHash: string;
  token: DepositTokenName;
  tokenAddress: string | null;
}

export type CreditResult =
  | { status: 'credited'; deposit: Deposit; balanceWei: bigint }
  | { status: 'already_credited'; deposit: Deposit };

const TX_HASH_RE = /^0x[0-9a-f]{64}$/;
const ADDRESS_RE = /^0x[0-9a-f]{40}$/;

function toDeposit(row: repo.DepositRow): Deposit {
  return {
    id: row.id,
    organization_id: row.organization_id,
    tx_hash: row.tx_hash,
    token: DEPOSIT_TOKENS.find((t) => t === row.token) ?? 'ONS',
    token_address: row.token_address,
    amount_wei: row.amount_wei,
    amount: formatTokens(BigInt(row.amount_wei)),
    when_created: asIso(row.created_at),
  };
}

/** Deposits: credited by the operator command (later by a chain watcher), listed by clients. */
export class DepositService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The deposits of the caller's organization (`org-id` naming another one finds none). */
  async list(auth: AuthContext, q: ListDepositsQuery): Promise<Page<Deposit>> {
    const orgId = requireOrg(auth);
    const p = parseList(q, repo.DEPOSIT_LIST);
    if (q['org-id'] !== undefined && q['org-id'] !== orgId) {
      return { items: [], next: '', has_more: false };
    }
    const rows = await repo.listDeposits(
      this.db,
      orgId,
      {
        id: q.id,
        txHash: q.tx_hash,
        token: q.token,
        tokenAddress: q.token_address,
        dates: q,
      },
      p,
    );
    const page = pageOf(
      rows,
      p,
      (r) => asDate(r.created_at),
      (r) => r.id,
    );
    return { ...page, items: page.items.map(toDeposit) };
  }

  /**
   * Credits a deposit: the deposit row, its ledger row and the balance change commit in
   * one transaction. Idempotent on the transaction hash: crediting a known hash again
   * changes nothing and answers `already_credited`; the same hash with another
   * organization, amount or token is refused (409 code 6), since that is an operator error.
   */
  async credit(input: CreditInput): Promise<CreditResult> {
    const txHash = input.txHash.trim().toLowerCase();
    const tokenAddress = input.tokenAddress?.trim().toLowerCase() ?? null;
    if (!TX_HASH_RE.test(txHash)) throw invalid('tx hash must be 0x followed by 64 hex digits');
    if (tokenAddress !== null && !ADDRESS_RE.test(tokenAddress)) {
      throw invalid('token address must be 0x followed by 40 hex digits');
    }
    if (input.amountWei <= 0n) throw invalid('a deposit amount must be positive');
    return this.db.transaction(async (tx) => {
      if (!(await repo.organizationIsLive(tx, input.orgId))) throw notFound('organization');
      const row: repo.DepositRow = {
        id: newId('deposit'),
        organization_id: input.orgId,
        tx_hash: txHash,
        token: input.token,
        token_address: tokenAddress,
        amount_wei: input.amountWei.toString(),
        created_at: this.clock.now(),
      };
      const inserted = await repo.insertDepositOnce(tx, row);
      if (inserted === null) {
        const existing = await repo.findByTxHash(tx, txHash);
        if (!existing) throw new Error(`deposit ${txHash} conflicted but cannot be read`);
        if (
          existing.organization_id !== input.orgId ||
          existing.amount_wei !== row.amount_wei ||
          existing.token !== row.token
        ) {
          throw conflict(
            `tx hash ${txHash} was already credited as deposit ${existing.id} ` +
              `(${formatTokens(BigInt(existing.amount_wei))} ${existing.token} to ${existing.organization_id})`,
          );
        }
        return { status: 'already_credited', deposit: toDeposit(existing) } as const;
      }
      const entry = await recordLedgerEntry(tx, {
        orgId: input.orgId,
        kind: 'deposit',
        amountWei: input.amountWei,
        refId: row.id,
        now: asDate(row.created_at),
      });
      return {
        status: 'credited',
        deposit: toDeposit(row),
        balanceWei: entry.balanceAfterWei,
      } as const;
    });
  }
}
