import { formatDate } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';
import { isForbidden } from './dashboard-recent-actions.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/** How many open deliveries the overview lists. */
const SHOWN = 10;

const STATUS_TEXT: Record<string, string> = {
  pending: 'waiting for its first attempt',
  retrying: 'failed, retrying',
  failed: 'failed: every attempt failed',
  stopped: 'stopped: the receiver answered 410',
};

interface Attempt {
  status_code: number | null;
  error: string | null;
}

/** The last attempt in a few words: its HTTP status or why no answer came. */
function lastAttempt(attempts: Attempt[]): string {
  const a = attempts[attempts.length - 1];
  if (!a) return 'not attempted yet';
  if (a.status_code !== null) return `answered ${a.status_code}`;
  return a.error ?? 'no answer';
}

/**
 * Webhook deliveries not delivered yet or that ended without delivery
 * (`GET /webhooks/events?status=open`), each linking to its webhook's page where it is
 * redelivered; a webhook the service switched off is named first.
 */
export function DashboardOpenDeliveries({ organizationId }: { organizationId: string | null }) {
  const state = useLoad(async () => {
    if (!organizationId) return null;
    const [hooks, open] = await Promise.all([
      ons.GET('/webhooks', { params: { query: { limit: 100 } } }),
      ons.GET('/webhooks/events', { params: { query: { status: 'open', limit: SHOWN } } }),
    ]);
    return { hooks: hooks.webhooks, open };
  }, [organizationId]);
  const d = state.data;
  const hookOf = (id: string) => d?.hooks.find((h) => h.id === id);
  const nameOf = (id: string) => {
    const h = hookOf(id);
    return h ? h.description || h.url : id;
  };
  const off = d?.hooks.filter((h) => !h.is_active) ?? [];
  return (
    <section aria-labelledby="open-deliveries" data-testid="open-deliveries">
      <h2 id="open-deliveries">Open deliveries</h2>
      {!organizationId && (
        <p class="empty">
          No organization yet: <a href={paths.organization}>create one</a>, then add a webhook;
          deliveries that have not arrived are listed here.
        </p>
      )}
      {state.loading && organizationId && <Progress label="Loading the deliveries…" />}
      {isForbidden(state.error) ? (
        <p class="empty">Your role cannot see the organization’s webhooks.</p>
      ) : (
        <ErrorMessage error={state.error} />
      )}
      {off.map((h) => (
        <p key={h.id} class="warning">
          The webhook <a href={pathOf(paths.webhook, h.id)}>{h.description || h.url}</a> is switched
          off: nothing is delivered to it. Fix its endpoint, then switch it back on from its page.
        </p>
      ))}
      {d && d.hooks.length === 0 && (
        <p class="empty">
          No webhooks yet: <a href={paths.webhooks}>add one</a> to have each action of your
          templates pushed to your server as it is applied.
        </p>
      )}
      {d && d.hooks.length > 0 && d.open.events.length === 0 && (
        <p class="empty">
          Nothing open: every delivery has arrived. Each webhook’s page (
          <a href={paths.webhooks}>Webhooks</a>) has its full delivery log.
        </p>
      )}
      {d && d.open.events.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Webhook</th>
              <th scope="col">Status</th>
              <th scope="col">Last attempt</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {d.open.events.map((e) => (
              <tr key={e.id}>
                <td>{formatDate(e.when_created)}</td>
                <td>
                  <a href={pathOf(paths.webhook, e.webhook_id)}>{nameOf(e.webhook_id)}</a>
                </td>
                <td>{STATUS_TEXT[e.status] ?? e.status}</td>
                <td>{lastAttempt(e.attempts)}</td>
                <td>
                  {e.next_attempt_at
                    ? formatDate(e.next_attempt_at)
                    : 'none: redeliver it from its webhook’s page'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {d?.open.has_more && (
        <p class="hint">
          More are open: each webhook’s delivery log (<a href={paths.webhooks}>Webhooks</a>) lists
          them all, filtered by status.
        </p>
      )}
    </section>
  );
}
