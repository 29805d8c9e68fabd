import { parseArgs } from 'node:util';
import type { Db } from '../../db/pool.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { AppError } from '../../lib/errors.js';
import { formatTokens, parseTokens } from '../../lib/money.js';
import { DEPOSIT_TOKENS, type DepositTokenName } from './schema.js';
import { DepositService } from './service.js';

export const DEPOSITS_USAGE = `  deposits credit --org <id> --amount <tokens> --tx-hash <0x…> [--token ONS] [--token-address <0x…>]
                               credit a deposit (idempotent on --tx-hash)`;

/** A mistake in the command line: printed with exit code 2. */
export class DepositUsageError extends Error {}

/**
 * `deposits credit …`: parses the options and credits the deposit. Answers the one
 * sentence to print. A second run with the same --tx-hash changes nothing and says so.
 */
export async function runDepositsCommand(
  db: Db,
  args: string[],
  clock: Clock = systemClock,
): Promise<string> {
  const [sub, ...rest] = args;
  if (sub !== 'credit') throw new DepositUsageError(`usage:\n${DEPOSITS_USAGE}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      org: { type: 'string' },
      amount: { type: 'string' },
      'tx-hash': { type: 'string' },
      token: { type: 'string', default: 'ONS' },
      'token-address': { type: 'string' },
    },
  });
  if (!values.org || !values.amount || !values['tx-hash']) {
    throw new DepositUsageError('deposits credit needs --org, --amount and --tx-hash');
  }
  const token = DEPOSIT_TOKENS.find((t) => t === values.token);
  if (!token) {
    throw new DepositUsageError(`--token must be one of ${DEPOSIT_TOKENS.join(', ')}`);
  }
  let amountWei: bigint;
  try {
    amountWei = parseTokens(values.amount);
  } catch (err) {
    throw new DepositUsageError(`--amount: ${(err as Error).message}`);
  }
  const svc = new DepositService(db, clock);
  try {
    const result = await svc.credit({
      orgId: values.org,
      amountWei,
      txHash: values['tx-hash'],
      token: token satisfies DepositTokenName,
      tokenAddress: values['token-address'] ?? null,
    });
    const d = result.deposit;
    if (result.status === 'already_credited') {
      return `already credited: ${d.tx_hash} is deposit ${d.id} (${d.amount} ${d.token} to ${d.organization_id}); nothing changed`;
    }
    return `credited ${d.amount} ${d.token} to ${d.organization_id} as deposit ${d.id}; balance now ${formatTokens(result.balanceWei)} ${d.token}`;
  } catch (err) {
    if (err instanceof AppError) throw new DepositUsageError(err.message);
    throw err;
  }
}
