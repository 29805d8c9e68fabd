import { useState } from 'preact/hooks';
import { ACTIONS, DataTable } from '../components/data-table.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { ErrorMessage } from '../components/error-message.js';
import { CheckField, Field } from '../components/field.js';
import { ActionStatus, FormCard, Notice } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { adoptTokens, ons, usePermissions } from '../lib/session.js';
import { paths } from '../paths.js';

function CreateOrganization({
  onCreated,
}: {
  onCreated: (id: string, name: string) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [selfSignup, setSelfSignup] = useState(false);
  const create = useAction(async () => {
    const { id } = await ons.POST('/organizations', {
      body: {
        name: name.trim(),
        ...(description.trim() ? { description: description.trim() } : {}),
        settings: { allow_self_signup: selfSignup },
      },
    });
    setName('');
    setDescription('');
    await onCreated(id, name.trim());
  });
  return (
    <FormCard
      title="Create an organization"
      submit="Create organization"
      action={create}
      busyLabel="Creating the organization…"
    >
      <Field label="Name" name="org-name" required maxLength={200} value={name} onValue={setName} />
      <Field
        label="Description (optional)"
        name="org-description"
        maxLength={2000}
        value={description}
        onValue={setDescription}
      />
      <CheckField
        label="Let people sign up into it by themselves"
        checked={selfSignup}
        onChecked={setSelfSignup}
      />
    </FormCard>
  );
}

function Organizations({ currentId }: { currentId: string | null }) {
  const held = usePermissions();
  const list = useLoad(
    () => ons.GET('/organizations', { params: { query: { limit: 100 } } }),
    [currentId],
  );
  // Switching gives tokens in the chosen organization's context (docs/auth.md, top).
  const switchTo = useAction(
    async (organizationId: string, _name: string) => {
      adoptTokens(
        await ons.POST('/organizations/switch', { body: { organization_id: organizationId } }),
      );
    },
    (_id, name) => `You now act in ${name}.`,
  );
  const current = list.data?.organizations.find((o) => o.id === currentId) ?? null;
  const toggleSignup = useAction(
    async (allow: boolean) => {
      if (!current) return;
      await ons.PATCH('/organizations/{organizationId}', {
        params: { path: { organizationId: current.id } },
        body: { settings: { allow_self_signup: allow } },
      });
      list.reload();
    },
    (allow) =>
      allow
        ? 'Self sign-up is allowed: anyone with the sign-up link can join as a member.'
        : 'Self sign-up is stopped: people join only by invitation.',
  );
  return (
    <>
      {list.loading && <Progress label="Loading organizations…" />}
      <ErrorMessage error={list.error ?? switchTo.error} />
      {switchTo.notice && <Notice>{switchTo.notice}</Notice>}
      {current && (
        <div class="card">
          <h2>{current.name}</h2>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{current.id}</code>
            </dd>
            <dt>Your role</dt>
            <dd>{current.role ?? '—'}</dd>
            <dt>Description</dt>
            <dd>{current.description || '—'}</dd>
            <dt>Self sign-up</dt>
            <dd>{current.settings.allow_self_signup ? 'allowed' : 'not allowed'}</dd>
            {current.settings.allow_self_signup && (
              <>
                <dt>Sign-up link</dt>
                <dd>
                  <code data-testid="sign-up-link">{`${window.location.origin}${paths.signUp}?organization=${current.id}`}</code>
                </dd>
              </>
            )}
            <dt>Created</dt>
            <dd>{formatDate(current.when_created)}</dd>
          </dl>
          {held.has('organizations.update') &&
            (current.settings.allow_self_signup ? (
              <button
                type="button"
                class="secondary"
                disabled={toggleSignup.busy}
                onClick={() => void toggleSignup.run(false)}
              >
                Stop self sign-up
              </button>
            ) : (
              // Turning it on gives the member role to anyone with the link: asked first.
              <ConfirmButton
                variant="secondary"
                question="Allow self sign-up? Anyone with the sign-up link can then join this organization as a member."
                confirm="Allow self sign-up"
                disabled={toggleSignup.busy}
                onConfirm={() => void toggleSignup.run(true)}
              >
                Allow self sign-up
              </ConfirmButton>
            ))}
          <ActionStatus action={toggleSignup} busyLabel="Saving…" />
          <ErrorMessage error={toggleSignup.error} />
        </div>
      )}
      {list.data && (
        <>
          <h2>Your organizations</h2>
          <DataTable
            columns={['Name', 'Role', 'Id', ACTIONS]}
            rows={list.data.organizations}
            empty="You belong to no organization yet."
            rowKey={(o) => o.id}
            cells={(o) => [
              o.name,
              o.role ?? '—',
              <code>{o.id}</code>,
              o.id === currentId ? (
                <strong>current</strong>
              ) : (
                <button
                  type="button"
                  class="secondary"
                  disabled={switchTo.busy}
                  onClick={() => void switchTo.run(o.id, o.name)}
                >
                  Switch to {o.name}
                </button>
              ),
            ]}
          />
          {switchTo.busy && <Progress label="Switching organization…" />}
        </>
      )}
      <CreateOrganization
        onCreated={async (id, name) => {
          // A new organization is where its creator most likely wants to act next.
          await switchTo.run(id, name);
        }}
      />
    </>
  );
}

/** The organization acted in, the others to switch to, and a new one. */
export function OrganizationPage() {
  return (
    <RequireSignIn>
      {(claims) => (
        <section>
          <h1>Organization</h1>
          <Organizations currentId={claims.organizationId} />
        </section>
      )}
    </RequireSignIn>
  );
}
