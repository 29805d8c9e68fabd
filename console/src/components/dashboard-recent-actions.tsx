import { isOnsError } from '@ons/sdk';
import { formatDate, formatTokens } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/** How many actions the overview lists. */
const SHOWN = 5;

/** A 403 answer: the caller's role lacks the permission (shown as such, not as a failure). */
export const isForbidden = (error: unknown): boolean => isOnsError(error) && error.status === 403;

/**
 * The organization's latest actions, newest first (`GET /ebus/action-logs`), each with its
 * object; without any, what to do to get a first one.
 */
export function DashboardRecentActions({
  organizationId,
  hasTemplates,
}: {
  organizationId: string | null;
  hasTemplates: boolean | null;
}) {
  const logs = useLoad(async () => {
    if (!organizationId) return null;
    const page = await ons.GET('/ebus/action-logs', {
      params: { query: { limit: SHOWN, order: 'desc' } },
    });
    // Each object's name (at most SHOWN reads); one that cannot be read shows its id.
    const ids = [...new Set(page.action_logs.map((a) => a.object_id).filter((id) => id !== null))];
    const named = await Promise.all(
      ids.map((id) =>
        ons.GET('/objects/{id}', { params: { path: { id } } }).then(
          (o) => [id, o.metadata.name] as const,
          () => [id, ''] as const,
        ),
      ),
    );
    return { ...page, names: new Map(named) };
  }, [organizationId]);
  const list = logs.data?.action_logs ?? [];
  return (
    <section aria-labelledby="recent-actions" data-testid="recent-actions">
      <h2 id="recent-actions">Recent actions</h2>
      {!organizationId && (
        <p class="empty">
          No organization yet: <a href={paths.organization}>create one</a>; the actions signed in it
          are listed here.
        </p>
      )}
      {logs.loading && organizationId && <Progress label="Loading the actions…" />}
      {isForbidden(logs.error) ? (
        <p class="empty">Your role cannot see the organization’s actions.</p>
      ) : (
        <ErrorMessage error={logs.error} />
      )}
      {logs.data && list.length === 0 && (
        <p class="empty">
          No actions yet.{' '}
          {hasTemplates === false ? (
            <>
              Every object comes from a template: <a href={paths.templates}>create one</a>, then
              mint a first object from it.
            </>
          ) : (
            <>
              <a href={paths.objects}>Mint a first object</a> from one of your templates; each
              action signed in your organization then shows here.
            </>
          )}
        </p>
      )}
      {list.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Object</th>
              <th scope="col">Fee (ONS)</th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.id}>
                <td>{formatDate(a.when_created)}</td>
                <td>
                  {a.name}
                  <div class="hint">
                    signed with {a.signature_type === 'webauthn' ? 'a passkey' : 'a crypto wallet'}
                  </div>
                </td>
                <td>
                  {a.object_id ? (
                    <a href={pathOf(paths.object, a.object_id)}>
                      {logs.data?.names.get(a.object_id) || <code>{a.object_id}</code>}
                    </a>
                  ) : (
                    '—'
                  )}
                </td>
                <td>{formatTokens(a.fee_wei)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {logs.data?.has_more && (
        <p class="hint">
          Older actions: each object’s page (<a href={paths.objects}>Objects</a>) lists its whole
          history.
        </p>
      )}
    </section>
  );
}
