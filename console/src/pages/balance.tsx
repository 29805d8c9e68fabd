import { useMemo, useState } from 'preact/hooks';
import { BalanceChart, type BalancePoint } from '../components/balance-chart.js';
import { DataTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { SelectField } from '../components/field.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate, formatTokens } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';

type Range = 'week' | 'month' | 'year' | 'all';
const INTERVAL: Record<Range, 'hour' | 'day' | 'week' | 'month'> = {
  week: 'day',
  month: 'day',
  year: 'week',
  all: 'month',
};

interface Bucket {
  start: string;
  end: string;
  credits_wei: string;
  debits_wei: string;
  closing_balance_wei: string;
}

const seconds = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);
const tokens = (wei: bigint) => Number(formatTokens(wei.toString()));

/**
 * The balance as a line: the opening balance at the first bucket's start, each bucket's
 * closing balance at its end (buckets without movement are not listed), and the last one now.
 */
function chartPoints(buckets: Bucket[]): BalancePoint[] {
  const first = buckets[0];
  const last = buckets.at(-1);
  if (!first || !last) return [];
  const opening =
    BigInt(first.closing_balance_wei) - BigInt(first.credits_wei) + BigInt(first.debits_wei);
  const points = [{ t: seconds(first.start), balance: tokens(opening) }];
  for (const b of buckets) {
    points.push({
      t: Math.min(seconds(b.end), Date.now() / 1000),
      balance: tokens(BigInt(b.closing_balance_wei)),
    });
  }
  points.push({
    t: Math.floor(Date.now() / 1000),
    balance: tokens(BigInt(last.closing_balance_wei)),
  });
  // uPlot needs x in ascending order without repeats.
  return points.filter((p, i) => i === 0 || p.t > points[i - 1]!.t);
}

type Deposit = Awaited<ReturnType<typeof loadDeposits>>['deposits'][number];
const loadDeposits = (next?: string) =>
  ons.GET('/payments/deposits', { params: { query: { limit: 20, ...(next ? { next } : {}) } } });

function Deposits() {
  const first = useLoad(() => loadDeposits(), []);
  const [more, setMore] = useState<{ deposits: Deposit[]; next: string; has_more: boolean } | null>(
    null,
  );
  const loadMore = useAction(async () => {
    const from = more ?? first.data;
    if (!from?.next) return;
    const page = await loadDeposits(from.next);
    setMore({
      deposits: [...(more?.deposits ?? []), ...page.deposits],
      next: page.next,
      has_more: page.has_more,
    });
  });
  const deposits = [...(first.data?.deposits ?? []), ...(more?.deposits ?? [])];
  const hasMore = more ? more.has_more : (first.data?.has_more ?? false);
  return (
    <>
      <h2>Deposits</h2>
      {first.loading && <Progress label="Loading deposits…" />}
      <ErrorMessage error={first.error ?? loadMore.error} />
      <DataTable
        columns={['When', 'Amount', 'Token', 'Transaction']}
        rows={first.data && deposits}
        empty="No deposits yet."
        rowKey={(d) => d.id}
        cells={(d) => [formatDate(d.when_created), d.amount, d.token, <code>{d.tx_hash}</code>]}
      />
      {hasMore && (
        <button
          type="button"
          class="secondary"
          disabled={loadMore.busy}
          onClick={() => void loadMore.run()}
        >
          Load more deposits
        </button>
      )}
      {loadMore.busy && <Progress label="Loading more deposits…" />}
    </>
  );
}

function Balance({ organizationId }: { organizationId: string }) {
  const [range, setRange] = useState<Range>('month');
  const balance = useLoad(
    () =>
      ons.GET('/organizations/{organizationId}/balance', { params: { path: { organizationId } } }),
    [organizationId],
  );
  const history = useLoad(
    () =>
      ons.GET('/organizations/{organizationId}/balance/history', {
        params: {
          path: { organizationId },
          query: { interval: INTERVAL[range], 'time-range': range, order: 'asc', limit: 100 },
        },
      }),
    [organizationId, range],
  );
  const points = useMemo(() => chartPoints(history.data?.history ?? []), [history.data]);
  return (
    <>
      {balance.loading && <Progress label="Loading the balance…" />}
      <ErrorMessage error={balance.error} />
      {balance.data && (
        <p class="balance">
          <span class="hint">Balance</span>
          <strong>
            {balance.data.balance} {balance.data.token}
          </strong>
          <span class="hint" data-testid="actions-left">
            pays for {balance.data.actions_left} actions at today’s price
          </span>
        </p>
      )}
      <h2>Balance history</h2>
      <SelectField
        label="Period"
        inline
        value={range}
        onValue={setRange}
        options={[
          ['week', 'last week'],
          ['month', 'last month'],
          ['year', 'last year'],
          ['all', 'all time'],
        ]}
      />
      {history.loading && <Progress label="Loading the balance history…" />}
      <ErrorMessage error={history.error} />
      {history.data && points.length > 0 && (
        <>
          <BalanceChart
            points={points}
            label={`Balance over the ${range === 'all' ? 'whole history' : `last ${range}`}`}
          />
          <details>
            <summary>The figures</summary>
            <DataTable
              columns={['Until', 'Credits (ONS)', 'Debits (ONS)', 'Balance (ONS)']}
              rows={history.data.history}
              rowKey={(b) => b.start}
              cells={(b) => [
                formatDate(b.end),
                formatTokens(b.credits_wei),
                formatTokens(b.debits_wei),
                formatTokens(b.closing_balance_wei),
              ]}
            />
          </details>
        </>
      )}
      {history.data && points.length === 0 && <p>No movement in this period.</p>}
      <Deposits />
    </>
  );
}

/** The organization's balance, a chart of its history, and its deposits. */
export function BalancePage() {
  return (
    <RequireSignIn organization>
      {(claims) => (
        <section>
          <h1>Balance</h1>
          <Balance organizationId={claims.organizationId!} />
        </section>
      )}
    </RequireSignIn>
  );
}
