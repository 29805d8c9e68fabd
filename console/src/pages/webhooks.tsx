import { useState } from 'preact/hooks';
import { DataTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { FormCard } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SigningKey } from '../components/signing-key.js';
import { useWebhookDraft, WebhookFields } from '../components/webhook-rules.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';

function CreateWebhook({ onCreated }: { onCreated: (id: string, key: string) => void }) {
  const draft = useWebhookDraft();
  const create = useAction(async () => {
    const { description, ...body } = draft.body;
    const hook = await ons.POST('/webhooks', {
      body: { ...body, ...(description ? { description } : {}) },
    });
    draft.reset();
    onCreated(hook.id, hook.signing_key);
  });
  return (
    <FormCard
      title="Create a webhook"
      submit="Create webhook"
      action={create}
      busyLabel="Creating the webhook…"
    >
      <WebhookFields {...draft.fields} placeholder="https://hooks.example.com/ons" />
    </FormCard>
  );
}

function Webhooks() {
  const held = usePermissions();
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  // At most 5 webhooks per organization (docs/webhooks.md): one page holds them all.
  const list = useLoad(() => ons.GET('/webhooks', { params: { query: { limit: 20 } } }), []);
  return (
    <>
      {created && (
        <SigningKey signingKey={created.key} onDone={() => setCreated(null)}>
          <p>
            <a href={pathOf(paths.webhook, created.id)}>Open the new webhook</a>
          </p>
        </SigningKey>
      )}
      {list.loading && <Progress label="Loading webhooks…" />}
      <ErrorMessage error={list.error} />
      <DataTable
        columns={['Endpoint', 'Description', 'State', 'Rules', 'Created']}
        rows={list.data?.webhooks}
        empty="No webhooks yet."
        rowKey={(h) => h.id}
        cells={(h) => [
          <a href={pathOf(paths.webhook, h.id)}>{h.url}</a>,
          h.description || '—',
          h.is_active ? 'active' : 'inactive',
          h.rules.length,
          formatDate(h.when_created),
        ]}
      />
      {held.has('webhooks.create') && (
        <CreateWebhook
          onCreated={(id, key) => {
            setCreated({ id, key });
            list.reload();
          }}
        />
      )}
    </>
  );
}

/** The organization's webhooks: list, create (the signing key shown once). */
export function WebhooksPage() {
  return (
    <RequireSignIn organization>
      {() => (
        <section>
          <h1>Webhooks</h1>
          <p>
            A webhook sends every action that matches its rules to your HTTPS endpoint, signed with
            its signing key (see the service’s webhook documentation).
          </p>
          <Webhooks />
        </section>
      )}
    </RequireSignIn>
  );
}
