import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SecretOnce } from '../components/secret-once.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { OPERATIONS, RESOURCES } from '../lib/permissions.js';
import { ons } from '../lib/session.js';

type Operation = (typeof OPERATIONS)[number];
type Grid = Record<string, Record<Operation, boolean>>;

const emptyGrid = (): Grid =>
  Object.fromEntries(
    RESOURCES.map((r) => [r, { read: false, create: false, update: false, delete: false }]),
  );

function NewSecret({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <SecretOnce title="Your new API key" secret={secret} testId="api-key-secret" onDone={onDone}>
      Copy this key now and keep it somewhere safe. It is shown only this once: the service keeps
      only a hash of it and cannot show it again. Anyone who has it can act for your organization
      with its permissions.
    </SecretOnce>
  );
}

function CreateKey({ onCreated }: { onCreated: (secret: string) => void }) {
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [grid, setGrid] = useState<Grid>(emptyGrid);
  const create = useAction(async () => {
    const permissions = RESOURCES.filter((r) => OPERATIONS.some((o) => grid[r]![o])).map((r) => ({
      resource: r,
      crud: { ...grid[r]! },
    }));
    const ttlHours = Math.round(Number(days) * 24);
    const { secret } = await ons.POST('/api-keys', {
      body: {
        name: name.trim(),
        ...(Number.isFinite(ttlHours) && ttlHours > 0 ? { ttl_hours: ttlHours } : {}),
        permissions,
      },
    });
    setName('');
    setGrid(emptyGrid());
    onCreated(secret);
  });
  const toggle = (r: string, o: Operation, on: boolean) =>
    setGrid((g) => ({ ...g, [r]: { ...g[r]!, [o]: on } }));
  return (
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>Create an API key</h2>
      <div class="row">
        <label>
          Name
          <input
            name="key-name"
            required
            maxLength={100}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <label>
          Expires after (days, at most 365)
          <input
            type="number"
            name="key-days"
            min={1}
            max={365}
            required
            value={days}
            onInput={(e) => setDays(e.currentTarget.value)}
          />
        </label>
      </div>
      <table>
        <caption>Permissions (never more than your own)</caption>
        <thead>
          <tr>
            <th scope="col">Resource</th>
            {OPERATIONS.map((o) => (
              <th scope="col" key={o}>
                {o}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {RESOURCES.map((r) => (
            <tr key={r}>
              <th scope="row">{r}</th>
              {OPERATIONS.map((o) => (
                <td key={o}>
                  <input
                    type="checkbox"
                    aria-label={`${r} ${o}`}
                    checked={grid[r]![o]}
                    onChange={(e) => toggle(r, o, e.currentTarget.checked)}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <button type="submit" disabled={create.busy}>
        Create key
      </button>
      {create.busy && <Progress label="Creating the key…" />}
      <ErrorMessage error={create.error} />
    </form>
  );
}

function summary(permissions: { resource: string; crud: Record<Operation, boolean> }[]): string {
  if (permissions.length === 0) return 'none';
  return permissions
    .map((p) => `${p.resource}: ${OPERATIONS.filter((o) => p.crud[o]).join(', ') || '—'}`)
    .join('; ');
}

function ApiKeys() {
  const [secret, setSecret] = useState<string | null>(null);
  // At most 10 live keys per organization (design.md §3), so one page holds them all.
  const list = useLoad(() => ons.GET('/api-keys', { params: { query: { limit: 10 } } }), []);
  const remove = useAction(async (id: string) => {
    await ons.DELETE('/api-keys/{id}', { params: { path: { id } } });
    list.reload();
  });
  const keys = list.data?.keys ?? [];
  return (
    <>
      {secret && <NewSecret secret={secret} onDone={() => setSecret(null)} />}
      {list.loading && <Progress label="Loading API keys…" />}
      <ErrorMessage error={list.error ?? remove.error} />
      {list.data && keys.length === 0 && <p>No API keys yet.</p>}
      {keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Permissions</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>
                  {k.name}
                  <div class="hint">
                    <code>{k.id}</code>
                  </div>
                </td>
                <td>{summary(k.permissions)}</td>
                <td>{formatDate(k.expires_at)}</td>
                <td>{k.last_used_at ? formatDate(k.last_used_at) : 'never'}</td>
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={remove.busy}
                    aria-label={`Delete ${k.name}`}
                    onClick={() => void remove.run(k.id)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {remove.busy && <Progress label="Deleting the key…" />}
      <CreateKey
        onCreated={(s) => {
          setSecret(s);
          list.reload();
        }}
      />
    </>
  );
}

/** The organization's API keys: create (the secret shown once), list with expiry, delete. */
export function ApiKeysPage() {
  return (
    <RequireSignIn organization>
      {() => (
        <section>
          <h1>API keys</h1>
          <ApiKeys />
        </section>
      )}
    </RequireSignIn>
  );
}
