import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SigningKey } from '../components/signing-key.js';
import { emptyRule, ruleBody, WebhookFields, type RuleDraft } from '../components/webhook-rules.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';

function CreateWebhook({ onCreated }: { onCreated: (id: string, key: string) => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [rules, setRules] = useState<RuleDraft[]>([emptyRule()]);
  const create = useAction(async () => {
    const hook = await ons.POST('/webhooks', {
      body: {
        url: url.trim(),
        rules: rules.map(ruleBody),
        ...(description.trim() ? { description: description.trim() } : {}),
      },
    });
    setUrl('');
    setDescription('');
    setRules([emptyRule()]);
    onCreated(hook.id, hook.signing_key);
  });
  return (
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        void create.run();
      }}
    >
      <h2>Create a webhook</h2>
      <WebhookFields
        url={url}
        onUrl={setUrl}
        description={description}
        onDescription={setDescription}
        rules={rules}
        onRules={setRules}
        placeholder="https://hooks.example.com/ons"
      />
      <button type="submit" disabled={create.busy}>
        Create webhook
      </button>
      {create.busy && <Progress label="Creating the webhook…" />}
      <ErrorMessage error={create.error} />
    </form>
  );
}

function Webhooks() {
  const [created, setCreated] = useState<{ id: string; key: string } | null>(null);
  // At most 5 webhooks per organization (docs/webhooks.md): one page holds them all.
  const list = useLoad(() => ons.GET('/webhooks', { params: { query: { limit: 20 } } }), []);
  const hooks = list.data?.webhooks ?? [];
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
      {list.data && hooks.length === 0 && <p>No webhooks yet.</p>}
      {hooks.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Description</th>
              <th scope="col">State</th>
              <th scope="col">Rules</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {hooks.map((h) => (
              <tr key={h.id}>
                <td>
                  <a href={pathOf(paths.webhook, h.id)}>{h.url}</a>
                </td>
                <td>{h.description || '—'}</td>
                <td>{h.is_active ? 'active' : 'inactive'}</td>
                <td>{h.rules.length}</td>
                <td>{formatDate(h.when_created)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateWebhook
        onCreated={(id, key) => {
          setCreated({ id, key });
          list.reload();
        }}
      />
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
