import {
  DashboardBalance,
  DashboardChecklist,
  useDashboardFacts,
} from '../components/dashboard-checklist.js';
import { DashboardOpenDeliveries } from '../components/dashboard-open-deliveries.js';
import { DashboardRecentActions } from '../components/dashboard-recent-actions.js';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';

/**
 * The dashboard (issue 32 item 3): who you are and where you act, the balance and how many
 * actions it pays for, the getting-started checklist, the recent actions and the open
 * webhook deliveries; every empty part says what to do next.
 */
function Overview({ organizationId }: { organizationId: string | null }) {
  const me = useLoad(() => ons.GET('/wallets/me'), []);
  const org = useLoad(
    async () =>
      organizationId
        ? ons.GET('/organizations/{organizationId}', { params: { path: { organizationId } } })
        : null,
    [organizationId],
  );
  const facts = useDashboardFacts(organizationId);
  return (
    <section>
      <h1>Overview</h1>
      {(me.loading || org.loading) && <Progress label="Loading…" />}
      <ErrorMessage error={me.error ?? org.error} />
      {me.data && (
        <dl class="facts">
          <dt>Wallet</dt>
          <dd>
            <code>{me.data.id}</code>
          </dd>
          <dt>Address</dt>
          <dd>
            <code>{me.data.address}</code>
          </dd>
          <dt>Organization</dt>
          <dd>
            {org.data ? (
              <>
                {org.data.name} (<code>{org.data.id}</code>), your role: {org.data.role ?? '—'}
              </>
            ) : (
              <>
                none yet: <a href={paths.organization}>create or switch to one</a>
              </>
            )}
          </dd>
        </dl>
      )}
      <DashboardBalance organizationId={organizationId} facts={facts} />
      <DashboardChecklist organizationId={organizationId} facts={facts} />
      <DashboardRecentActions
        organizationId={organizationId}
        hasTemplates={facts.data?.templates ?? null}
      />
      <DashboardOpenDeliveries organizationId={organizationId} />
    </section>
  );
}

/** The first page after sign-in: the organization's dashboard. */
export function HomePage() {
  return <RequireSignIn>{(c) => <Overview organizationId={c.organizationId} />}</RequireSignIn>;
}
