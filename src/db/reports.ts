import { reportsBusy } from '../lib/errors.js';
import { SlotGate } from '../lib/slot-gate.js';
import type { Executor } from './pool.js';

/**
 * Where an organization's reports read: authenticated reads whose cost grows with the
 * organization's data (the balance history, the indexer's searches). `read` gets the executor
 * to run its statements on; it is called once the organization's turn has come.
 */
export interface ReportReads {
  run<T>(orgId: string, read: (exec: Executor) => Promise<T>): Promise<T>;
}

/** Reports read where `exec` reads, with no bound of their own (a service built alone). */
export const readsOn = (exec: Executor): ReportReads => ({
  run: (_orgId, read) => read(exec),
});

/** How many of one organization's reports may wait for its turn at once; more are refused. */
const MAX_WAITING_PER_ORGANIZATION = 32;

/**
 * Reports on the reports' pool (src/db/pool.ts, createReportsDatabase), at most
 * `perOrganization` of one organization's at once: a report runs its statements one after
 * another, so it holds at most one connection, and one organization at most `perOrganization`
 * of them; the others of the same organization wait their turn for at most `waitMs`, then answer
 * 503 code 14 with Retry-After. Another organization's reports never wait for this one's
 * (docs/self-hosting.md, "Reports"). Per process: each process has a pool of its own.
 */
export class OrganizationReports implements ReportReads {
  private readonly gates = new Map<string, SlotGate>();

  constructor(
    private readonly exec: Executor,
    private readonly perOrganization: number,
    private readonly waitMs: number,
  ) {}

  run<T>(orgId: string, read: (exec: Executor) => Promise<T>): Promise<T> {
    let gate = this.gates.get(orgId);
    if (!gate) {
      gate = new SlotGate(this.perOrganization, this.waitMs, MAX_WAITING_PER_ORGANIZATION, () =>
        reportsBusy(),
      );
      this.gates.set(orgId, gate);
    }
    const turn = gate;
    return turn
      .run(() => read(this.exec))
      .finally(() => {
        // Only organizations with reports running or waiting are remembered.
        const { running, waiting } = turn.load;
        if (running === 0 && waiting === 0 && this.gates.get(orgId) === turn) {
          this.gates.delete(orgId);
        }
      });
  }

  /** Organizations with reports running or waiting (for tests). */
  get organizations(): number {
    return this.gates.size;
  }
}
