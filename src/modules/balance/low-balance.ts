import type { Logger } from 'pino';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Pause, type Worker } from '../../lib/worker.js';
import { formatTokens } from '../../lib/money.js';
import type { MessageSender } from '../notify/index.js';
import { claimLowBalances } from '../organizations/index.js';

/** How often the notifier looks for organizations below their threshold. */
export const LOW_BALANCE_EVERY_MS = 10_000;

/**
 * Tells the owners and admins of an organization by email when its balance has fallen below
 * the threshold it set (docs/policies.md, "Low balance"): once per crossing, at most once per
 * 24 hours, off the request path (a loop, not the event bus). Any number of processes may run
 * it: a claim takes the organization's row with SKIP LOCKED and disarms it in the same
 * statement, so one process tells. A process that dies between the claim and the send loses
 * that one notice (the next crossing is told).
 */
export class LowBalanceNotifier implements Worker {
  readonly name = 'low-balance-notifier';
  private readonly pause = new Pause();
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sender: MessageSender,
    private readonly logger: Logger,
    private readonly everyMs = LOW_BALANCE_EVERY_MS,
  ) {}

  /** One pass: answers how many organizations were told. */
  async pass(): Promise<number> {
    const due = await claimLowBalances(this.db, this.clock.now());
    for (const org of due) {
      const balance = formatTokens(BigInt(org.balance_wei));
      const threshold = formatTokens(BigInt(org.low_balance_wei));
      for (const to of org.recipients) {
        try {
          await this.sender.send({
            channel: 'email',
            to,
            kind: 'low-balance',
            subject: `${org.name}: balance below ${threshold} ONS`,
            text: `The balance of ${org.name} (${org.id}) is ${balance} ONS, below the ${threshold} ONS you set. Actions are refused once it cannot pay their fee; add funds to keep them running.`,
          });
        } catch (err) {
          this.logger.warn({ err, kind: 'low-balance' }, 'a low-balance notice was not sent');
        }
      }
    }
    return due.length;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.pass();
        } catch (err) {
          this.logger.warn({ err }, 'low-balance pass failed');
        }
        if (this.running) await this.pause.wait(this.everyMs);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
  }
}
