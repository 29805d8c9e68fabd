import { useState } from 'preact/hooks';
import { formatDate } from '../lib/format.js';
import { useAction } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { ErrorMessage } from './error-message.js';
import { usePaged } from './pager.js';
import { Progress } from './progress.js';

const STATUSES = ['pending', 'retrying', 'done', 'failed', 'stopped'] as const;
type Status = (typeof STATUSES)[number];

/** A webhook's deliveries, newest first, with each attempt; redeliver a failed or stopped one. */
export function DeliveryLog({ webhookId }: { webhookId: string }) {
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
      <label class="inline">
        Status
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
          <option value="">every status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="secondary" onClick={list.reload}>
        Refresh
      </button>
      <ErrorMessage error={list.error ?? redeliver.error} />
      {queued && (
        <p class="notice" role="status">
          {queued}
        </p>
      )}
      {!list.loading && !list.error && list.items.length === 0 && <p>No deliveries.</p>}
      {list.items.length > 0 && (
        <table data-testid="deliveries">
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((e) => (
              <tr key={e.id}>
                <td>
                  <code>{e.id}</code>
                  <div class="hint">
                    action <code>{e.action_id}</code>, {formatDate(e.when_created)}
                  </div>
                </td>
                <td>
                  {e.status}
                  {e.next_attempt_at && (
                    <div class="hint">next attempt {formatDate(e.next_attempt_at)}</div>
                  )}
                </td>
                <td>
                  {e.attempts.length === 0 ? (
                    'none yet'
                  ) : (
                    <ol class="attempts">
                      {e.attempts.map((a, i) => (
                        <li key={i}>
                          {formatDate(a.when_created)}: {a.status_code ?? 'no answer'},{' '}
                          {a.duration_ms} ms{a.error ? ` — ${a.error}` : ''}
                        </li>
                      ))}
                    </ol>
                  )}
                </td>
                <td>
                  {(e.status === 'failed' || e.status === 'stopped') && (
                    <button
                      type="button"
                      class="secondary"
                      disabled={redeliver.busy}
                      aria-label={`Redeliver ${e.id}`}
                      onClick={() => void redeliver.run(e.id)}
                    >
                      Redeliver
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(list.loading || redeliver.busy) && <Progress label="Loading deliveries…" />}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" onClick={list.more}>
          Older deliveries
        </button>
      )}
    </>
  );
}
