import { ACTIONS, DataTable } from '../components/data-table.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { ErrorMessage } from '../components/error-message.js';
import { ActionStatus } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SignInMethods } from '../components/sign-in-methods.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';

function Sessions() {
  const list = useLoad(
    () => ons.GET('/wallets/sessions', { params: { query: { limit: 100 } } }),
    [],
  );
  const end = useAction(
    async (sessionId: string) => {
      await ons.DELETE('/wallets/sessions/{sessionId}', { params: { path: { sessionId } } });
      list.reload();
    },
    () => 'The session is ended: whoever used it is signed out.',
  );
  return (
    <section>
      <h1>Sessions</h1>
      <p>Every place your account is signed in. End any session you do not recognise.</p>
      {list.loading && <Progress label="Loading sessions…" />}
      <ErrorMessage error={list.error ?? end.error} />
      <ActionStatus action={end} busyLabel="Ending the session…" />
      <DataTable
        caption={`${list.data?.sessions.length ?? 0} live sessions`}
        captionClass="hint"
        columns={['Device', 'Address', 'Signed in', 'Last used', ACTIONS]}
        rows={list.data?.sessions}
        rowKey={(s) => s.id}
        cells={(s) => [
          <>
            {s.device || 'unknown device'}
            {s.current && <strong> (this session)</strong>}
          </>,
          s.ip ?? '—',
          formatDate(s.when_created),
          formatDate(s.last_used_at),
          !s.current && (
            <ConfirmButton
              question={`End the session on ${s.device || 'an unknown device'}? It is signed out at once.`}
              confirm="End the session"
              disabled={end.busy}
              onConfirm={() => void end.run(s.id)}
            >
              End this session
            </ConfirmButton>
          ),
        ]}
      />
      <SignInMethods />
    </section>
  );
}

/** The signed-in person's live sessions, each with "end this session", and sign-in methods. */
export function SessionsPage() {
  return <RequireSignIn>{() => <Sessions />}</RequireSignIn>;
}
