import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { adoptTokens, ons } from '../lib/session.js';

function CreateOrganization({ onCreated }: { onCreated: (id: string) => Promise<void> }) {
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
    await onCreated(id);
  });
  return (
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>Create an organization</h2>
      <label>
        Name
        <input
          name="org-name"
          required
          maxLength={200}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <label>
        Description (optional)
        <input
          name="org-description"
          maxLength={2000}
          value={description}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
      </label>
      <label>
        <input
          type="checkbox"
          checked={selfSignup}
          onChange={(e) => setSelfSignup(e.currentTarget.checked)}
        />
        Let people sign up into it by themselves
      </label>
      <button type="submit" disabled={create.busy}>
        Create organization
      </button>
      {create.busy && <Progress label="Creating the organization…" />}
      <ErrorMessage error={create.error} />
    </form>
  );
}

function Organizations({ currentId }: { currentId: string | null }) {
  const list = useLoad(
    () => ons.GET('/organizations', { params: { query: { limit: 100 } } }),
    [currentId],
  );
  // Switching gives tokens in the chosen organization's context (design.md §4).
  const switchTo = useAction(async (organizationId: string) => {
    adoptTokens(
      await ons.POST('/organizations/switch', { body: { organization_id: organizationId } }),
    );
  });
  const current = list.data?.organizations.find((o) => o.id === currentId) ?? null;
  const toggleSignup = useAction(async (allow: boolean) => {
    if (!current) return;
    await ons.PATCH('/organizations/{organizationId}', {
      params: { path: { organizationId: current.id } },
      body: { settings: { allow_self_signup: allow } },
    });
    list.reload();
  });
  return (
    <>
      {list.loading && <Progress label="Loading organizations…" />}
      <ErrorMessage error={list.error ?? switchTo.error} />
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
            <dt>Created</dt>
            <dd>{formatDate(current.when_created)}</dd>
          </dl>
          {(current.role === 'owner' || current.role === 'admin') && (
            <button
              type="button"
              class="secondary"
              disabled={toggleSignup.busy}
              onClick={() => void toggleSignup.run(!current.settings.allow_self_signup)}
            >
              {current.settings.allow_self_signup ? 'Stop self sign-up' : 'Allow self sign-up'}
            </button>
          )}
          <ErrorMessage error={toggleSignup.error} />
        </div>
      )}
      {list.data && (
        <>
          <h2>Your organizations</h2>
          {list.data.organizations.length === 0 ? (
            <p>You belong to no organization yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Role</th>
                  <th scope="col">Id</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.organizations.map((o) => (
                  <tr key={o.id}>
                    <td>{o.name}</td>
                    <td>{o.role ?? '—'}</td>
                    <td>
                      <code>{o.id}</code>
                    </td>
                    <td>
                      {o.id === currentId ? (
                        <strong>current</strong>
                      ) : (
                        <button
                          type="button"
                          class="secondary"
                          disabled={switchTo.busy}
                          onClick={() => void switchTo.run(o.id)}
                        >
                          Switch to {o.name}
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {switchTo.busy && <Progress label="Switching organization…" />}
        </>
      )}
      <CreateOrganization
        onCreated={async (id) => {
          // A new organization is where its creator most likely wants to act next.
          await switchTo.run(id);
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
