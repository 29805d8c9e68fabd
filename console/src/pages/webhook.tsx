import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { DeliveryLog } from '../components/delivery-log.js';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SigningKey } from '../components/signing-key.js';
import {
  ruleBody,
  ruleDraftOf,
  WebhookFields,
  type RuleDraft,
} from '../components/webhook-rules.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';

interface Hook {
  id: string;
  url: string;
  description: string;
  is_active: boolean;
  rules: { template_id: string; actions: string[]; addresses: string[] }[];
  when_created: string;
  when_modified: string;
}

function EditWebhook({ hook, onSaved }: { hook: Hook; onSaved: () => void }) {
  const [url, setUrl] = useState(hook.url);
  const [description, setDescription] = useState(hook.description);
  const [rules, setRules] = useState<RuleDraft[]>(hook.rules.map(ruleDraftOf));
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await ons.PUT('/webhooks/{webhookId}', {
      params: { path: { webhookId: hook.id } },
      body: { url: url.trim(), description: description.trim(), rules: rules.map(ruleBody) },
    });
    setSaved(true);
    onSaved();
  });
  return (
    <form
      class="card"
      onSubmit={(e) => {
        e.preventDefault();
        void save.run();
      }}
    >
      <h2>Edit</h2>
      <WebhookFields
        url={url}
        onUrl={setUrl}
        description={description}
        onDescription={setDescription}
        rules={rules}
        onRules={setRules}
      />
      <button type="submit" disabled={save.busy}>
        Save changes
      </button>
      {save.busy && <Progress label="Saving…" />}
      {saved && (
        <p class="notice" role="status">
          Saved.
        </p>
      )}
      <ErrorMessage error={save.error} />
    </form>
  );
}

function Webhook({ id }: { id: string }) {
  const { route } = useLocation();
  const hook = useLoad(
    () => ons.GET('/webhooks/{webhookId}', { params: { path: { webhookId: id } } }),
    [id],
  );
  const [key, setKey] = useState<string | null>(null);
  const activate = useAction(async () => {
    await ons.PUT('/webhooks/{webhookId}', {
      params: { path: { webhookId: id } },
      body: { is_active: true },
    });
    hook.reload();
  });
  const rotate = useAction(async () => {
    const answer = await ons.POST('/webhooks/{webhookId}/rotate-key', {
      params: { path: { webhookId: id } },
    });
    setKey(answer.signing_key);
  });
  const remove = useAction(async () => {
    await ons.DELETE('/webhooks/{webhookId}', { params: { path: { webhookId: id } } });
    route(paths.webhooks);
  });
  const h = hook.data;
  return (
    <section>
      <p>
        <a href={paths.webhooks}>← All webhooks</a>
      </p>
      <h1>Webhook</h1>
      {hook.loading && !h && <Progress label="Loading the webhook…" />}
      <ErrorMessage error={hook.error} />
      {h && (
        <>
          {key && <SigningKey signingKey={key} onDone={() => setKey(null)} />}
          <dl class="facts wrap">
            <dt>Id</dt>
            <dd>
              <code>{h.id}</code>
            </dd>
            <dt>Endpoint</dt>
            <dd>{h.url}</dd>
            <dt>Description</dt>
            <dd>{h.description || '—'}</dd>
            <dt>State</dt>
            <dd data-testid="webhook-state">{h.is_active ? 'active' : 'inactive'}</dd>
            <dt>Created / modified</dt>
            <dd>
              {formatDate(h.when_created)} / {formatDate(h.when_modified)}
            </dd>
          </dl>
          {!h.is_active && (
            <p class="warning">
              This webhook is inactive: the service switched it off after deliveries kept failing,
              or it was switched off. Nothing is delivered until it is active again.
            </p>
          )}
          <div class="row">
            {!h.is_active && (
              <button type="button" disabled={activate.busy} onClick={() => void activate.run()}>
                Re-activate
              </button>
            )}
            <button
              type="button"
              class="secondary"
              disabled={rotate.busy}
              onClick={() => void rotate.run()}
            >
              Rotate the signing key
            </button>
            <button
              type="button"
              class="danger"
              disabled={remove.busy}
              onClick={() => void remove.run()}
            >
              Delete the webhook
            </button>
          </div>
          {(activate.busy || rotate.busy || remove.busy) && <Progress label="Working…" />}
          <ErrorMessage error={activate.error ?? rotate.error ?? remove.error} />
          <EditWebhook key={h.when_modified} hook={h} onSaved={hook.reload} />
          <DeliveryLog webhookId={h.id} />
        </>
      )}
    </section>
  );
}

/** One webhook: edit, re-activate, rotate the key, delete, and its delivery log. */
export function WebhookPage() {
  const { params } = useRoute();
  return <RequireSignIn organization>{() => <Webhook id={params.id ?? ''} />}</RequireSignIn>;
}
