import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { addPasskey } from '../lib/sign-in.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

const TYPE_NAMES: Record<string, string> = {
  password: 'Password',
  passkey: 'Passkey',
  eoa: 'Crypto wallet',
  google: 'Google',
};

/** The signed-in wallet's credentials: add a passkey, remove one (never the last). */
export function SignInMethods() {
  const list = useLoad(() => ons.GET('/wallets/me/credentials'), []);
  const add = useAction(async () => {
    await addPasskey();
    list.reload();
  });
  const remove = useAction(async (credentialId: string) => {
    await ons.DELETE('/wallets/me/credentials/{credentialId}', {
      params: { path: { credentialId } },
    });
    list.reload();
  });
  const credentials = list.data?.credentials ?? [];
  return (
    <>
      <h2>Sign-in methods</h2>
      <p>
        How you can sign in. A passkey also signs your actions. Removing one ends the sessions it
        opened.
      </p>
      {list.loading && <Progress label="Loading sign-in methods…" />}
      <ErrorMessage error={list.error ?? remove.error} />
      {credentials.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Method</th>
              <th scope="col">Label</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {credentials.map((c) => {
              const name = TYPE_NAMES[c.type] ?? c.type;
              return (
                <tr key={c.id}>
                  <td>{name}</td>
                  <td>{c.label || '—'}</td>
                  <td>{formatDate(c.when_created)}</td>
                  <td>
                    {credentials.length > 1 && (
                      <button
                        type="button"
                        class="secondary"
                        disabled={remove.busy}
                        aria-label={`Remove ${name} ${c.label}`.trim()}
                        onClick={() => void remove.run(c.id)}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <button type="button" disabled={add.busy} onClick={() => void add.run()}>
        Add a passkey
      </button>
      {add.busy && <Progress label="Creating your passkey…" />}
      <ErrorMessage error={add.error} />
    </>
  );
}
