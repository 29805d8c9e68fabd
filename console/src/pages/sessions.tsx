import { ErrorMessage } from '../components/error-message.js';
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
  const end = useAction(async (sessionId: string) => {
    await ons.DELETE('/wallets/sessions/{sessionId}', { params: { path: { sessionId } } });
    list.reload();
  });
  const sessions = list.data?.sessions ?? [];
  return (
    <section>
      <h1>Sessions</h1>
      <p>Every place your account is signed in. End any session you do not recognise.</p>
      {list.loading && <Progress label="Loading sessions…" />}
      <ErrorMessage error={list.error ?? end.error} />
      {list.data && (
        <table>
          <caption class="hint">{sessions.length} live sessions</caption>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Address</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id}>
                <td>
                  {s.device || 'unknown device'}
                  {s.current && <strong> (this session)</strong>}
                </td>
                <td>{s.ip ?? '—'}</td>
                <td>{formatDate(s.when_created)}</td>
                <td>{formatDate(s.last_used_at)}</td>
                <td>
                  {!s.current && (
                    <button
                      type="button"
                      class="danger"
                      disabled={end.busy}
                      onClick={() => void end.run(s.id)}
                    >
                      End this session
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {end.busy && <Progress label="Ending the session…" />}
      <SignInMethods />
    </section>
  );
}

/** The signed-in person's live sessions, each with "end this session", and sign-in methods. */
export function SessionsPage() {
  return <RequireSignIn>{() => <Sessions />}</RequireSignIn>;
}
