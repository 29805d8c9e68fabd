import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';

function Overview({ organizationId }: { organizationId: string | null }) {
  const me = useLoad(() => ons.GET('/wallets/me'), []);
  const org = useLoad(
    async () =>
      organizationId
        ? ons.GET('/organizations/{organizationId}', { params: { path: { organizationId } } })
        : null,
    [organizationId],
  );
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
    </section>
  );
}

/** The first page after sign-in: who you are and where you act. */
export function HomePage() {
  return <RequireSignIn>{(c) => <Overview organizationId={c.organizationId} />}</RequireSignIn>;
}
