import type { Db } from '../../db/pool.js';
import { readsOn, type ReportReads } from '../../db/reports.js';
import type { Clock } from '../../lib/clock.js';
import { asDate, asIso } from '../../db/values.js';
import { notFound } from '../../lib/errors.js';
import { pageOf, parseList, type Page } from '../../lib/list.js';
import { formatTokens, NATIVE_DECIMALS, NATIVE_TOKEN } from '../../lib/money.js';
import type { AuthContext } from '../../lib/permissions.js';
import { requireOrgPermission, resolveOrgAccess, setLowBalance } from '../organizations/index.js';
import * as repo from './repo.js';
import type {
  Balance,
  BalanceHistoryQuery,
  HistoryBucket,
  HistoryTimeRange,
  LowBalanceInput,
} from './schema.js';

const DAY_MS = 86_400_000;

/** The start of a time range ending at `now` (calendar months and years, in UTC). */
function rangeStart(range: Exclude<HistoryTimeRange, 'all'>, now: Date): Date {
  const d = new Date(now);
  switch (range) {
    case 'day':
      return new Date(now.getTime() - DAY_MS);
    case 'week':
      return new Date(now.getTime() - 7 * DAY_MS);
    case 'month':
      d.setUTCMonth(d.getUTCMonth() - 1);
      return d;
    case 'year':
      d.setUTCFullYear(d.getUTCFullYear() - 1);
      return d;
  }
}

const maxDate = (a: Date, b: Date) => (a > b ? a : b);
const minDate = (a: Date, b: Date) => (a < b ? a : b);

/** An organization's balance and its history, both read from the ledger's totals. */
export class BalanceService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Today's price of one action (the event bus's fee). */
    private readonly price: () => Promise<bigint> = () => Promise.resolve(0n),
    /**
     * Where the history's sums run: the reports' pool, at most REPORTS_PER_ORGANIZATION of
     * one organization's at once (src/db/reports.ts); its cost grows with the ledger.
     */
    private readonly reports: ReportReads = readsOn(db),
  ) {}

  async get(auth: AuthContext, orgId: string): Promise<Balance> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'balance.read');
    return this.answer(orgId);
  }

  private async answer(orgId: string): Promise<Balance> {
    const row = await repo.findLowBalance(this.db, orgId);
    if (!row) throw notFound('organization');
    const wei = BigInt(row.balance_wei);
    const low = row.low_balance_wei === null ? null : BigInt(row.low_balance_wei);
    const fee = await this.price();
    return {
      organization_id: orgId,
      token: NATIVE_TOKEN,
      decimals: NATIVE_DECIMALS,
      balance_wei: wei.toString(),
      balance: formatTokens(wei),
      low_balance_wei: low === null ? null : low.toString(),
      low: low !== null && wei < low,
      actions_left: fee > 0n ? (wei / fee).toString() : '0',
    };
  }

  /**
   * Sets the organization's low-balance threshold (null: none). Its owners and admins are
   * told by email when the balance falls below it (low-balance.ts); a new threshold is a new
   * crossing.
   */
  async setLowBalance(auth: AuthContext, orgId: string, body: LowBalanceInput): Promise<Balance> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'balance.update');
    const wei = body.low_balance_wei === null ? null : BigInt(body.low_balance_wei);
    if (!(await setLowBalance(this.db, orgId, wei))) throw notFound('organization');
    return this.answer(orgId);
  }

  /**
   * Buckets of credits, debits and the closing balance over a time range, newest first by
   * default. The range is `time-range` back from now, never before the organization
   * existed, narrowed by the when_created filters.
   */
  async history(
    auth: AuthContext,
    orgId: string,
    q: BalanceHistoryQuery,
  ): Promise<Page<HistoryBucket>> {
    const access = await resolveOrgAccess(this.db, auth, orgId);
    requireOrgPermission(access, 'balance.read');
    const p = parseList({ limit: q.limit, next: q.next, order: q.order }, repo.HISTORY_PAGING);
    const org = await repo.findBalance(this.db, orgId);
    if (!org) throw notFound('organization');

    const now = this.clock.now();
    const createdAt = asDate(org.created_at);
    const dates = q as Record<string, string | undefined>;
    const gt = dates['when_created[$gt]'];
    const gte = dates['when_created[$gte]'];
    const lt = dates['when_created[$lt]'];
    const lte = dates['when_created[$lte]'];
    const range = q['time-range'] ?? (gt !== undefined || gte !== undefined ? 'all' : 'month');
    let from = range === 'all' ? createdAt : maxDate(rangeStart(range, now), createdAt);
    let to = now;
    if (gt !== undefined) from = maxDate(from, new Date(Date.parse(gt) + 1));
    if (gte !== undefined) from = maxDate(from, new Date(gte));
    if (lt !== undefined) to = minDate(to, new Date(Date.parse(lt) - 1));
    if (lte !== undefined) to = minDate(to, new Date(lte));

    // Once the caller may read it: only a member's reports take the organization's turns.
    const rows = await this.reports.run(orgId, (exec) =>
      repo.historyPage(exec, {
        orgId,
        unit: q.interval ?? 'day',
        from,
        to,
        after: p.after ? new Date(p.after.value) : null,
        order: p.order,
        limit: p.limit,
      }),
    );
    const page = pageOf(
      rows,
      p,
      (r) => asDate(r.start),
      () => '',
    );
    return {
      ...page,
      items: page.items.map((r) => ({
        start: asIso(r.start),
        end: asIso(r.end),
        credits_wei: r.credits_wei,
        debits_wei: r.debits_wei,
        closing_balance_wei: r.closing_balance_wei,
      })),
    };
  }
}
