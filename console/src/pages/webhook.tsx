import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { ConfirmButton } from '../components/confirm-button.js';
import { DeliveryLog } from '../components/delivery-log.js';
import { ErrorMessage } from '../components/error-message.js';
import { FormCard, Notice } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { SigningKey } from '../components/signing-key.js';
import { useWebhookDraft, WebhookFields } from '../components/webhook-rules.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';
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
  const draft = useWebhookDraft(hook);
  const [saved, setSaved] = useState(false);
  const save = useAction(async () => {
    setSaved(false);
    await ons.PUT('/webhooks/{webhookId}', {
      params: { path: { webhookId: hook.id } },
      body: draft.body,
    });
    setSaved(true);
    onSaved();
  });
  return (
    <FormCard
      title="Edit"
      submit="Save changes"
      action={save}
      busyLabel="Saving…"
      notice={saved && 'Saved.'}
    >
      <WebhookFields {...draft.fields} />
    </FormCard>
  );
}

function Webhook({ id }: { id: string }) {
  const held = usePermissions();
  const { route } = useLocation();
  const hook = useLoad(
    () => ons.GET('/webhooks/{webhookId}', { params: { path: { webhookId: id } } }),
    [id],
  );
  const [key, setKey] = useState<string | null>(null);
  const activate = useAction(
    async () => {
      await ons.PUT('/webhooks/{webhookId}', {
        params: { path: { webhookId: id } },
        body: { is_active: true },
      });
      hook.reload();
    },
    () => 'The webhook is active again: matching actions are delivered from now on.',
  );
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
            {!h.is_active && held.has('webhooks.update') && (
              <button type="button" disabled={activate.busy} onClick={() => void activate.run()}>
                Re-activate
              </button>
            )}
            {held.has('webhooks.update') && (
              <ConfirmButton
                variant="secondary"
                question="Rotate the signing key? For the next 24 hours each delivery is signed with both keys; after that only the new one counts, so give it to your endpoint within that time."
                confirm="Rotate the key"
                disabled={rotate.busy}
                onConfirm={() => void rotate.run()}
              >
                Rotate the signing key
              </ConfirmButton>
            )}
            {held.has('webhooks.delete') && (
              <ConfirmButton
                question="Delete this webhook? Nothing is delivered to its endpoint any more."
                confirm="Delete the webhook"
                disabled={remove.busy}
                onConfirm={() => void remove.run()}
              >
                Delete the webhook
              </ConfirmButton>
            )}
          </div>
          {(activate.busy || rotate.busy || remove.busy) && <Progress label="Working…" />}
          {activate.notice && <Notice>{activate.notice}</Notice>}
          <ErrorMessage error={activate.error ?? rotate.error ?? remove.error} />
          {held.has('webhooks.update') && (
            <EditWebhook key={h.when_modified} hook={h} onSaved={hook.reload} />
          )}
          <DeliveryLog webhookId={h.id} canRedeliver={held.has('webhooks.update')} />
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
