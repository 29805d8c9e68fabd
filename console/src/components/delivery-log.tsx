import { useState } from 'preact/hooks';
import { formatDate } from '../lib/format.js';
import { useAction } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { ACTIONS, PagedTable } from './data-table.js';
import { SelectField } from './field.js';
import { Notice } from './form-card.js';
import { usePaged } from './pager.js';

const STATUSES = ['pending', 'retrying', 'done', 'failed', 'stopped'] as const;
type Status = (typeof STATUSES)[number];

interface Attempt {
  when_created: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/**
 * Each attempt of a delivery: when, what the endpoint answered (or that it did not), how long
 * it took, and the whole error as the service recorded it, wrapped, never cut.
 */
function Attempts({ attempts }: { attempts: Attempt[] }) {
  return (
    <ol class="attempts">
      {attempts.map((a, i) => (
        <li key={i}>
          {formatDate(a.when_created)}: {a.status_code ?? 'no answer'}, {a.duration_ms} ms
          {a.error && <div class="attempt-error">{a.error}</div>}
        </li>
      ))}
    </ol>
  );
}

/** A webhook's deliveries, newest first, with each attempt; redeliver a failed or stopped one. */
export function DeliveryLog({
  webhookId,
  canRedeliver,
}: {
  webhookId: string;
  canRedeliver: boolean;
}) {
  const [status, setStatus] = useState<Status | ''>('');
  const list = usePaged(
    async (next) => {
      const page = await ons.GET('/webhooks/{webhookId}/events', {
        params: {
          path: { webhookId },
          query: {
            order: 'desc',
            limit: 20,
            ...(status ? { status } : {}),
            ...(next ? { next } : {}),
          },
        },
      });
      return { items: page.events, next: page.next, has_more: page.has_more };
    },
    [webhookId, status],
  );
  const [queued, setQueued] = useState<string | null>(null);
  const redeliver = useAction(async (eventId: string) => {
    setQueued(null);
    await ons.POST('/webhooks/{webhookId}/events/{eventId}/redeliver', {
      params: { path: { webhookId, eventId } },
    });
    setQueued(`Delivery ${eventId} is queued again.`);
    list.reload();
  });
  return (
    <>
      <h2>Delivery log</h2>
      <SelectField
        label="Status"
        inline
        value={status}
        onValue={setStatus}
        options={[['', 'every status'], ...STATUSES]}
      />
      <button type="button" class="secondary" onClick={list.reload}>
        Refresh
      </button>
      {queued && <Notice>{queued}</Notice>}
      <PagedTable
        list={list}
        error={list.error ?? redeliver.error}
        busy={redeliver.busy}
        empty="No deliveries."
        loading="Loading deliveries…"
        more="Older deliveries"
        testId="deliveries"
        columns={['Delivery', 'Status', 'Attempts', ACTIONS]}
        rowKey={(e) => e.id}
        cells={(e) => [
          <>
            <code>{e.id}</code>
            <div class="hint">
              action <code>{e.action_id}</code>, {formatDate(e.when_created)}
            </div>
          </>,
          <>
            {e.status}
            {e.next_attempt_at && (
              <div class="hint">next attempt {formatDate(e.next_attempt_at)}</div>
            )}
          </>,
          e.attempts.length === 0 ? 'none yet' : <Attempts attempts={e.attempts} />,
          canRedeliver && (e.status === 'failed' || e.status === 'stopped') && (
            <button
              type="button"
              class="secondary"
              disabled={redeliver.busy}
              aria-label={`Redeliver ${e.id}`}
              onClick={() => void redeliver.run(e.id)}
            >
              Redeliver
            </button>
          ),
        ]}
      />
    </>
  );
}
