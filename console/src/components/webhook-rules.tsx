import { useState } from 'preact/hooks';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

export const ACTION_NAMES = ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

/** One rule as the form holds it: addresses as the text typed (one per line). */
export interface RuleDraft {
  template_id: string;
  actions: ActionName[];
  addresses: string;
}

export const emptyRule = (): RuleDraft => ({ template_id: '', actions: [], addresses: '' });

/** The rule as the service takes it: empty lists mean every action or every signer. */
export function ruleBody(r: RuleDraft) {
  const addresses = r.addresses
    .split(/[\s,]+/)
    .map((a) => a.trim())
    .filter(Boolean);
  return {
    template_id: r.template_id.trim(),
    ...(r.actions.length > 0 ? { actions: r.actions } : {}),
    ...(addresses.length > 0 ? { addresses } : {}),
  };
}

export function ruleDraftOf(r: { template_id: string; actions: string[]; addresses: string[] }) {
  return {
    template_id: r.template_id,
    actions: r.actions.filter((a): a is ActionName =>
      (ACTION_NAMES as readonly string[]).includes(a),
    ),
    addresses: r.addresses.join('\n'),
  };
}

interface Choice {
  id: string;
  name: string;
}

/**
 * The templates a rule may name: the organization's own (`GET /templates`) and public ones of
 * other organizations. No route lists public templates, so those are the templates of the
 * public objects (`GET /public/objects`), named through `GET /public/templates/{id}`.
 */
async function templateChoices(): Promise<{ own: Choice[]; pub: Choice[] }> {
  const [own, objects] = await Promise.all([
    ons.GET('/templates', { params: { query: { limit: 100 } } }),
    ons.GET('/public/objects', { params: { query: { limit: 100 } } }),
  ]);
  const ownIds = new Set(own.templates.map((t) => t.id));
  const others = [...new Set(objects.objects.map((o) => o.template_id))]
    .filter((id) => !ownIds.has(id))
    .slice(0, 20);
  const pub = await Promise.all(
    others.map((id) =>
      ons
        .GET('/public/templates/{id}', { params: { path: { id } } })
        .then((t) => ({ id: t.id, name: t.name }))
        .catch(() => null),
    ),
  );
  return {
    own: own.templates.map((t) => ({ id: t.id, name: t.name })),
    pub: pub.filter((c): c is Choice => c !== null),
  };
}

/** The rules of a webhook: a template picker, optional actions and signer addresses each. */
export function RulesEditor({
  rules,
  onChange,
}: {
  rules: RuleDraft[];
  onChange: (rules: RuleDraft[]) => void;
}) {
  const choices = useLoad(templateChoices, []);
  const set = (i: number, patch: Partial<RuleDraft>) =>
    onChange(rules.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const known = new Set([
    ...(choices.data?.own ?? []).map((c) => c.id),
    ...(choices.data?.pub ?? []).map((c) => c.id),
  ]);
  return (
    <fieldset>
      <legend>Rules (an action is delivered when it matches any rule)</legend>
      {choices.loading && <Progress label="Loading templates…" />}
      <ErrorMessage error={choices.error} />
      {rules.map((r, i) => (
        <div class="rule" key={i} role="group" aria-label={`Rule ${i + 1}`}>
          <h3>Rule {i + 1}</h3>
          <label>
            Template (rule {i + 1})
            <select
              required
              value={r.template_id}
              onChange={(e) => set(i, { template_id: e.currentTarget.value })}
            >
              <option value="">Choose a template…</option>
              {r.template_id && !known.has(r.template_id) && (
                <option value={r.template_id}>{r.template_id}</option>
              )}
              <optgroup label="Your organization's templates">
                {(choices.data?.own ?? []).map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name} ({c.id})
                  </option>
                ))}
              </optgroup>
              <optgroup label="Public templates">
                {(choices.data?.pub ?? []).map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name} ({c.id})
                  </option>
                ))}
              </optgroup>
            </select>
          </label>
          <fieldset class="inline">
            <legend>Actions (none ticked: every action)</legend>
            {ACTION_NAMES.map((a) => (
              <label class="inline" key={a}>
                <input
                  type="checkbox"
                  checked={r.actions.includes(a)}
                  aria-label={`Rule ${i + 1} action ${a}`}
                  onChange={(e) =>
                    set(i, {
                      actions: e.currentTarget.checked
                        ? [...r.actions, a]
                        : r.actions.filter((x) => x !== a),
                    })
                  }
                />{' '}
                {a}
              </label>
            ))}
          </fieldset>
          <label>
            Signer addresses (rule {i + 1}; one per line, empty: every signer)
            <textarea
              rows={2}
              maxLength={5000}
              value={r.addresses}
              onInput={(e) => set(i, { addresses: e.currentTarget.value })}
            />
          </label>
          {rules.length > 1 && (
            <button
              type="button"
              class="secondary"
              onClick={() => onChange(rules.filter((_, j) => j !== i))}
            >
              Remove rule {i + 1}
            </button>
          )}
        </div>
      ))}
      {rules.length < 20 && (
        <button type="button" class="secondary" onClick={() => onChange([...rules, emptyRule()])}>
          Add a rule
        </button>
      )}
    </fieldset>
  );
}

/** A webhook as the service answers it (the fields the forms edit). */
interface HookFields {
  url: string;
  description: string;
  rules: { template_id: string; actions: string[]; addresses: string[] }[];
}

/**
 * The create and edit forms' state: the fields as typed (from `hook` when editing), their
 * props for `<WebhookFields>`, the body the service takes, and a reset.
 */
export function useWebhookDraft(hook?: HookFields) {
  const initial = () => ({
    url: hook?.url ?? '',
    description: hook?.description ?? '',
    rules: hook ? hook.rules.map(ruleDraftOf) : [emptyRule()],
  });
  const [d, setD] = useState(initial);
  return {
    body: { url: d.url.trim(), description: d.description.trim(), rules: d.rules.map(ruleBody) },
    reset: () => setD(initial()),
    fields: {
      url: d.url,
      onUrl: (url: string) => setD((x) => ({ ...x, url })),
      description: d.description,
      onDescription: (description: string) => setD((x) => ({ ...x, description })),
      rules: d.rules,
      onRules: (rules: RuleDraft[]) => setD((x) => ({ ...x, rules })),
    },
  };
}

/** A webhook's own fields (url, description) and its rules, for the create and edit forms. */
export function WebhookFields(props: {
  url: string;
  onUrl: (url: string) => void;
  description: string;
  onDescription: (description: string) => void;
  rules: RuleDraft[];
  onRules: (rules: RuleDraft[]) => void;
  placeholder?: string;
}) {
  return (
    <>
      <div class="row">
        <label>
          Endpoint URL (https)
          <input
            type="url"
            name="webhook-url"
            required
            maxLength={2048}
            placeholder={props.placeholder}
            value={props.url}
            onInput={(e) => props.onUrl(e.currentTarget.value)}
          />
        </label>
        <label>
          Description (optional)
          <input
            name="webhook-description"
            maxLength={500}
            value={props.description}
            onInput={(e) => props.onDescription(e.currentTarget.value)}
          />
        </label>
      </div>
      <RulesEditor rules={props.rules} onChange={props.onRules} />
    </>
  );
}
