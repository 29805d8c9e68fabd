import { useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { ACTIONS, DataTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { Field } from '../components/field.js';
import { ActionStatus, FormCard } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SecretOnce } from '../components/secret-once.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import {
  OPERATIONS,
  PRESETS,
  presetsOf,
  RESOURCES,
  type Operation,
  type Permission,
} from '../lib/permissions.js';
import { ons, usePermissions } from '../lib/session.js';

function NewSecret({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <SecretOnce title="Your new API key" secret={secret} testId="api-key-secret" onDone={onDone}>
      Copy this key now and keep it somewhere safe. It is shown only this once: the service keeps
      only a hash of it and cannot show it again. Anyone who has it can act for your organization
      with its permissions.
    </SecretOnce>
  );
}

/** The chosen permissions as the API takes them: one entry per resource with any operation. */
const bodyOf = (chosen: ReadonlySet<Permission>) =>
  RESOURCES.filter((r) => OPERATIONS.some((o) => chosen.has(`${r}.${o}`))).map((r) => ({
    resource: r,
    crud: Object.fromEntries(OPERATIONS.map((o) => [o, chosen.has(`${r}.${o}`)])) as Record<
      Operation,
      boolean
    >,
  }));

function CreateKey({
  held,
  onCreated,
}: {
  held: ReadonlySet<Permission>;
  onCreated: (secret: string) => void;
}) {
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [chosen, setChosen] = useState<ReadonlySet<Permission>>(new Set());
  const presets = presetsOf(held);
  const create = useAction(async () => {
    // The service refuses a key that grants nothing too; here it is not even sent.
    if (chosen.size === 0) {
      throw new Error('Choose at least one permission: a key without any could do nothing.');
    }
    const ttlHours = Math.round(Number(days) * 24);
    const { secret } = await ons.POST('/api-keys', {
      body: {
        name: name.trim(),
        ...(Number.isFinite(ttlHours) && ttlHours > 0 ? { ttl_hours: ttlHours } : {}),
        permissions: bodyOf(chosen),
      },
    });
    setName('');
    setChosen(new Set());
    onCreated(secret);
  });
  const toggle = (p: Permission, on: boolean) =>
    setChosen((c) => {
      const next = new Set(c);
      if (on) next.add(p);
      else next.delete(p);
      return next;
    });
  return (
    <FormCard
      title="Create an API key"
      submit="Create key"
      action={create}
      busyLabel="Creating the key…"
    >
      <div class="row">
        <Field
          label="Name"
          name="key-name"
          required
          maxLength={100}
          value={name}
          onValue={setName}
        />
        <Field
          label="Expires after (days, at most 365)"
          type="number"
          name="key-days"
          min={1}
          max={365}
          required
          value={days}
          onValue={setDays}
        />
      </div>
      <fieldset class="presets">
        <legend>Start from a preset</legend>
        {PRESETS.map((preset) => (
          <button
            key={preset}
            type="button"
            class="secondary"
            onClick={() => setChosen(presets[preset])}
          >
            {preset}
          </button>
        ))}
        <p class="hint">
          Read-only: every read. Minting backend: reads templates, mints and acts on objects. Full:
          everything you hold. Then adjust the boxes below.
        </p>
      </fieldset>
      <DataTable
        caption="Permissions (never more than your own)"
        columns={['Resource', ...OPERATIONS]}
        rows={RESOURCES}
        rowKey={(r) => r}
        rowHeader
        stack={false}
        cells={(r) => [
          r,
          ...OPERATIONS.map((o) => {
            const p = `${r}.${o}` as const;
            return (
              <input
                type="checkbox"
                aria-label={`${r} ${o}`}
                checked={chosen.has(p)}
                // What the creator does not hold cannot be given (the service refuses it).
                disabled={!held.has(p)}
                onChange={(e) => toggle(p, e.currentTarget.checked)}
              />
            );
          }),
        ]}
      />
      <p class="hint" data-testid="chosen-count">
        {chosen.size === 0
          ? 'No permission chosen yet: a key needs at least one.'
          : `${chosen.size} permission${chosen.size === 1 ? '' : 's'} chosen.`}
      </p>
    </FormCard>
  );
}

function summary(permissions: { resource: string; crud: Record<Operation, boolean> }[]): string {
  if (permissions.length === 0) return 'none';
  return permissions
    .map((p) => `${p.resource}: ${OPERATIONS.filter((o) => p.crud[o]).join(', ') || '—'}`)
    .join('; ');
}

function ApiKeys() {
  const held = usePermissions();
  const [secret, setSecret] = useState<string | null>(null);
  // At most 10 live keys per organization (docs/api.md, "API keys"), so one page holds them all.
  const list = useLoad(() => ons.GET('/api-keys', { params: { query: { limit: 10 } } }), []);
  const remove = useAction(
    async (id: string, _name: string) => {
      await ons.DELETE('/api-keys/{id}', { params: { path: { id } } });
      list.reload();
    },
    (_id, name) => `The key ${name} is deleted: it stopped working at once.`,
  );
  return (
    <>
      {secret && <NewSecret secret={secret} onDone={() => setSecret(null)} />}
      {list.loading && <Progress label="Loading API keys…" />}
      <ErrorMessage error={list.error ?? remove.error} />
      <ActionStatus action={remove} busyLabel="Deleting the key…" />
      <DataTable
        columns={['Name', 'Permissions', 'Expires', 'Last used', ACTIONS]}
        rows={list.data?.keys}
        empty="No API keys yet."
        rowKey={(k) => k.id}
        cells={(k) => [
          <>
            {k.name}
            <div class="hint">
              <code>{k.id}</code>
            </div>
          </>,
          summary(k.permissions),
          formatDate(k.expires_at),
          k.last_used_at ? formatDate(k.last_used_at) : 'never',
          held.has('api-keys.delete') && (
            <ConfirmButton
              label={`Delete ${k.name}`}
              question={`Delete the key ${k.name}? Whatever uses it stops working at once.`}
              confirm="Delete the key"
              disabled={remove.busy}
              onConfirm={() => void remove.run(k.id, k.name)}
            >
              Delete
            </ConfirmButton>
          ),
        ]}
      />
      {held.has('api-keys.create') && (
        <CreateKey
          held={held}
          onCreated={(s) => {
            setSecret(s);
            list.reload();
          }}
        />
      )}
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
