import { useState } from 'preact/hooks';
import { ACTIONS, DataTable } from '../components/data-table.js';
import { ConfirmButton } from '../components/confirm-button.js';
import { ErrorMessage } from '../components/error-message.js';
import { Field, SelectField } from '../components/field.js';
import { ActionStatus, FormCard, Notice } from '../components/form-card.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';

type Policy = Awaited<ReturnType<typeof listPolicies>>['policies'][number];
type Target = 'organization' | 'wallet' | 'api_key' | 'template';
type Period = 'minute' | 'hour' | 'day' | '30d';

const listPolicies = () => ons.GET('/policies', {});

/** Who a policy applies to, as the form offers it. */
const TARGETS = [
  ['organization', 'The whole organization'],
  ['wallet', 'A member wallet'],
  ['api_key', 'An API key'],
  ['template', 'A template'],
] as const;

/** How the id of each kind of target begins. */
const TARGET_PREFIX: Record<Exclude<Target, 'organization'>, string> = {
  wallet: 'wal',
  api_key: 'key',
  template: 'tpl',
};

const PERIOD_NAME: Record<string, string> = {
  minute: 'minute',
  hour: 'hour',
  day: 'day',
  '30d': '30 days',
};

/** What the form holds: every field as text, as typed. */
interface Draft {
  name: string;
  targetType: Target;
  targetId: string;
  period: Period | '';
  spendCapWei: string;
  maxActions: string;
  allowedActions: string;
  deniedActions: string;
  allowedTemplates: string;
  deniedTemplates: string;
  maxFeeWei: string;
}

const emptyDraft = (): Draft => ({
  name: '',
  targetType: 'wallet',
  targetId: '',
  period: 'hour',
  spendCapWei: '',
  maxActions: '',
  allowedActions: '',
  deniedActions: '',
  allowedTemplates: '',
  deniedTemplates: '',
  maxFeeWei: '',
});

const draftOf = (p: Policy): Draft => ({
  name: p.name,
  targetType: p.target_type as Target,
  targetId: p.target_id ?? '',
  period: (p.period ?? '') as Period | '',
  spendCapWei: p.spend_cap_wei ?? '',
  maxActions: p.max_actions === null ? '' : String(p.max_actions),
  allowedActions: (p.allowed_actions ?? []).join(', '),
  deniedActions: (p.denied_actions ?? []).join(', '),
  allowedTemplates: (p.allowed_templates ?? []).join(', '),
  deniedTemplates: (p.denied_templates ?? []).join(', '),
  maxFeeWei: p.max_fee_wei ?? '',
});

const list = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The limits of a draft as the API takes them (empty fields left out). */
function limitsOf(d: Draft) {
  const capped = d.spendCapWei.trim() !== '' || d.maxActions.trim() !== '';
  const body: Record<string, unknown> = { name: d.name.trim() };
  if (capped && d.period) body.period = d.period;
  if (d.spendCapWei.trim()) body.spend_cap_wei = d.spendCapWei.trim();
  if (d.maxActions.trim()) body.max_actions = Number(d.maxActions);
  for (const [key, text] of [
    ['allowed_actions', d.allowedActions],
    ['denied_actions', d.deniedActions],
    ['allowed_templates', d.allowedTemplates],
    ['denied_templates', d.deniedTemplates],
  ] as const) {
    if (text.trim()) body[key] = list(text);
  }
  if (d.maxFeeWei.trim()) body.max_fee_wei = d.maxFeeWei.trim();
  return body;
}

function targetOf(p: Policy): string {
  const kind: Record<string, string> = {
    organization: 'the whole organization',
    wallet: 'wallet',
    api_key: 'API key',
    template: 'template',
  };
  return p.target_id ? `${kind[p.target_type]} ${p.target_id}` : kind[p.target_type]!;
}

function limitsText(p: Policy): string {
  const per = p.period ? ` per ${PERIOD_NAME[p.period]}` : '';
  const parts: string[] = [];
  if (p.spend_cap_wei !== null) parts.push(`at most ${p.spend_cap_wei} wei${per}`);
  if (p.max_actions !== null) parts.push(`at most ${p.max_actions} actions${per}`);
  if (p.allowed_actions) parts.push(`only ${p.allowed_actions.join(', ')}`);
  if (p.denied_actions) parts.push(`never ${p.denied_actions.join(', ')}`);
  if (p.allowed_templates) parts.push(`only templates ${p.allowed_templates.join(', ')}`);
  if (p.denied_templates) parts.push(`never templates ${p.denied_templates.join(', ')}`);
  if (p.max_fee_wei !== null) parts.push(`no fee above ${p.max_fee_wei} wei`);
  return parts.join('; ');
}

function usageText(p: Policy): string {
  if (!p.usage) return '—';
  const parts: string[] = [];
  if (p.max_actions !== null) parts.push(`${p.usage.actions} of ${p.max_actions} actions`);
  if (p.spend_cap_wei !== null) parts.push(`${p.usage.spent_wei} of ${p.spend_cap_wei} wei`);
  return `${parts.join(', ')} this ${PERIOD_NAME[p.usage.period] ?? p.usage.period}`;
}

function PolicyForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing: Policy | null;
  onSaved: (notice: string) => void;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(() => (editing ? draftOf(editing) : emptyDraft()));
  const set = (k: keyof Draft) => (value: string) => setD((x) => ({ ...x, [k]: value }));
  const save = useAction(async () => {
    const limits = limitsOf(d);
    if (editing) {
      await ons.PUT('/policies/{id}', {
        params: { path: { id: editing.id } },
        body: limits as never,
      });
    } else {
      await ons.POST('/policies', {
        body: {
          ...limits,
          target_type: d.targetType,
          ...(d.targetType === 'organization' ? {} : { target_id: d.targetId.trim() }),
        } as never,
      });
      setD(emptyDraft());
    }
    onSaved(`The policy ${d.name.trim()} is ${editing ? 'saved' : 'created'}.`);
  });
  return (
    <FormCard
      title={editing ? `Edit ${editing.name}` : 'Create a policy'}
      submit={editing ? 'Save policy' : 'Create policy'}
      action={save}
      busyLabel="Saving the policy…"
      extra={
        editing && (
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        )
      }
    >
      <div class="row">
        <Field label="Policy name" required maxLength={100} value={d.name} onValue={set('name')} />
        {!editing && (
          <>
            <SelectField
              label="Applies to"
              value={d.targetType}
              onValue={set('targetType')}
              options={TARGETS}
            />
            {d.targetType !== 'organization' && (
              <Field
                label="Target id"
                required
                maxLength={30}
                placeholder={`${TARGET_PREFIX[d.targetType]}_…`}
                value={d.targetId}
                onValue={set('targetId')}
              />
            )}
          </>
        )}
      </div>
      <div class="row">
        <SelectField
          label="Window"
          name="period"
          value={d.period}
          onValue={set('period')}
          options={Object.entries(PERIOD_NAME)}
        />
        <Field
          label="Most actions per window"
          type="number"
          min={0}
          value={d.maxActions}
          onValue={set('maxActions')}
        />
        <Field
          label="Most wei spent per window"
          inputMode="numeric"
          value={d.spendCapWei}
          onValue={set('spendCapWei')}
        />
        <Field
          label="Largest single fee (wei)"
          inputMode="numeric"
          value={d.maxFeeWei}
          onValue={set('maxFeeWei')}
        />
      </div>
      <div class="row">
        <Field
          label="Allowed actions (comma-separated)"
          placeholder="mint, transfer"
          value={d.allowedActions}
          onValue={set('allowedActions')}
        />
        <Field label="Denied actions" value={d.deniedActions} onValue={set('deniedActions')} />
        <Field
          label="Allowed templates"
          value={d.allowedTemplates}
          onValue={set('allowedTemplates')}
        />
        <Field
          label="Denied templates"
          value={d.deniedTemplates}
          onValue={set('deniedTemplates')}
        />
      </div>
    </FormCard>
  );
}

function Policies() {
  const held = usePermissions();
  const loaded = useLoad(listPolicies, []);
  const [editing, setEditing] = useState<Policy | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const remove = useAction(
    async (id: string, _name: string) => {
      setSaved(null);
      await ons.DELETE('/policies/{id}', { params: { path: { id } } });
      loaded.reload();
    },
    (_id, name) => `The policy ${name} is deleted: what it limited is no longer limited by it.`,
  );
  return (
    <>
      <p>
        A policy limits what a wallet, an API key, a template or the whole organization may spend of
        the balance. An action it refuses costs nothing and names the policy.
      </p>
      {loaded.loading && <Progress label="Loading policies…" />}
      <ErrorMessage error={loaded.error ?? remove.error} />
      <ActionStatus action={remove} busyLabel="Deleting the policy…" />
      {saved && <Notice>{saved}</Notice>}
      <DataTable
        columns={['Name', 'Applies to', 'Limits', 'Use in the current window', ACTIONS]}
        rows={loaded.data?.policies}
        empty="No policies yet."
        rowKey={(p) => p.id}
        rowTestId={(p) => `policy-${p.id}`}
        cells={(p) => [
          <>
            {p.name}
            <div class="hint">
              <code>{p.id}</code>
            </div>
            {p.set_by_owner && <div class="hint">Set by an owner: only an owner changes it.</div>}
          </>,
          targetOf(p),
          limitsText(p),
          usageText(p),
          <>
            {held.has('policies.update') && (
              <button type="button" aria-label={`Edit ${p.name}`} onClick={() => setEditing(p)}>
                Edit
              </button>
            )}
            {held.has('policies.delete') && (
              <ConfirmButton
                label={`Delete ${p.name}`}
                question={`Delete the policy ${p.name}? What it limits is no longer limited by it.`}
                confirm="Delete the policy"
                disabled={remove.busy}
                onConfirm={() => void remove.run(p.id, p.name)}
              >
                Delete
              </ConfirmButton>
            )}
          </>,
        ]}
      />
      {(editing ? held.has('policies.update') : held.has('policies.create')) && (
        <PolicyForm
          key={editing?.id ?? 'new'}
          editing={editing}
          onSaved={(notice) => {
            setEditing(null);
            setSaved(notice);
            loaded.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
    </>
  );
}

/** Spend policies (docs/policies.md): create, edit, delete, and each one's use in its window. */
export function PoliciesPage() {
  return (
    <RequireSignIn organization>
      {() => (
        <section>
          <h1>Spend policies</h1>
          <Policies />
        </section>
      )}
    </RequireSignIn>
  );
}
