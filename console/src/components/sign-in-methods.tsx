import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { addPasskey } from '../lib/sign-in.js';
import { ACTIONS, DataTable } from './data-table.js';
import { ConfirmButton } from './confirm-button.js';
import { ErrorMessage } from './error-message.js';
import { ActionStatus } from './form-card.js';
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
  const add = useAction(
    async () => {
      await addPasskey();
      list.reload();
    },
    () => 'Passkey added: it signs you in and signs your actions.',
  );
  const remove = useAction(
    async (credentialId: string, _name: string) => {
      await ons.DELETE('/wallets/me/credentials/{credentialId}', {
        params: { path: { credentialId } },
      });
      list.reload();
    },
    (_id, name) => `${name} removed: the sessions it opened are ended.`,
  );
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
      <ActionStatus action={remove} busyLabel="Removing…" />
      <DataTable
        columns={['Method', 'Label', 'Added', ACTIONS]}
        rows={credentials.length > 0 ? credentials : undefined}
        rowKey={(c) => c.id}
        cells={(c) => {
          const name = TYPE_NAMES[c.type] ?? c.type;
          return [
            name,
            c.label || '—',
            formatDate(c.when_created),
            credentials.length > 1 && (
              <ConfirmButton
                variant="secondary"
                label={`Remove ${name} ${c.label}`.trim()}
                question={`Remove ${`${name} ${c.label}`.trim()}? You can no longer sign in with it, and the sessions it opened end.`}
                confirm="Remove the sign-in method"
                disabled={remove.busy}
                onConfirm={() => void remove.run(c.id, `${name} ${c.label}`.trim())}
              >
                Remove
              </ConfirmButton>
            ),
          ];
        }}
      />
      <button type="button" disabled={add.busy} onClick={() => void add.run()}>
        Add a passkey
      </button>
      <ActionStatus action={add} busyLabel="Creating your passkey…" />
      <ErrorMessage error={add.error} />
    </>
  );
}
