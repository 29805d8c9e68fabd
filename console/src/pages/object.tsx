import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { ActionForm } from '../components/action-form.js';
import { BatchLink } from '../components/batch-link.js';
import { DataTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { Field } from '../components/field.js';
import { Notice } from '../components/form-card.js';
import { Faces } from '../components/faces.js';
import { ObjectFacts } from '../components/object-facts.js';
import { Progress } from '../components/progress.js';
import { ReceiptCheck } from '../components/receipt-check.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { formatDate, formatTokens } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';
import { paths } from '../paths.js';

/** Parses the JSON a person typed for `custom` (an object), saying what is wrong. */
function customOf(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`custom is not JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new Error('custom must be a JSON object, e.g. {"seat": "12A"}.');
  }
  return v as Record<string, unknown>;
}

/**
 * The object's actions, newest first, each with its batch (verify it there) and its receipt
 * from the transparency log, checked in the browser (private objects' actions too).
 */
function History({ id, tick }: { id: string; tick: number }) {
  const logs = useLoad(
    () => ons.GET('/ebus/action-logs', { params: { query: { object_id: id, limit: 50 } } }),
    [id, tick],
  );
  return (
    <>
      <h2>History</h2>
      <ErrorMessage error={logs.error} />
      <DataTable
        testId="object-history"
        columns={['When', 'Action', 'Fee (ONS)', 'Batch', 'Receipt']}
        rows={logs.data?.action_logs}
        rowKey={(a) => a.id}
        cells={(a) => [
          formatDate(a.when_created),
          <>
            {a.name}
            <div class="hint">
              by <code>{a.wallet}</code> (
              {a.signature_type === 'webauthn' ? 'passkey' : 'crypto wallet'})
            </div>
          </>,
          formatTokens(a.fee_wei),
          <BatchLink batchId={a.batch_id}>open and verify</BatchLink>,
          <ReceiptCheck actionId={a.id} asMember />,
        ]}
      />
    </>
  );
}

function ObjectView({ id }: { id: string }) {
  const [tick, setTick] = useState(0);
  const [done, setDone] = useState<string | null>(null);
  const [to, setTo] = useState('');
  const [custom, setCustom] = useState('');
  const [lat, setLat] = useState('');
  const [lon, setLon] = useState('');
  const found = useLoad(() => ons.GET('/objects/{id}', { params: { path: { id } } }), [id, tick]);
  const me = useLoad(() => ons.GET('/wallets/me'), []);
  const o = found.data;
  const template = useLoad(
    () =>
      o
        ? ons.GET('/templates/{id}', { params: { path: { id: o.template_id } } })
        : Promise.resolve(null),
    [o?.template_id],
  );
  const allowed = new Set(template.data?.actions ?? []);
  const held = usePermissions();
  const owned = o !== undefined && me.data?.address.toLowerCase() === o.owner.toLowerCase();
  const after = (what: string) => (_: unknown, charged: string) => {
    setDone(`${what} Charged ${charged} ONS.`);
    setTick(tick + 1);
  };
  return (
    <section>
      <p>
        <a href={paths.objects}>← Objects</a>
      </p>
      <h1>{o ? o.metadata.name || 'Object' : 'Object'}</h1>
      <p>
        <code>{id}</code>
      </p>
      {found.loading && !o && <Progress label="Loading the object…" />}
      <ErrorMessage error={found.error ?? me.error} />
      {done && <Notice>{done}</Notice>}
      {o && (
        <>
          <ObjectFacts o={o} />
          {template.data && (
            <>
              <h2>Faces</h2>
              <Faces faces={template.data.faces} name={o.metadata.name || o.id} />
            </>
          )}
          {owned && !o.is_redeemed && held.has('actions.create') && (
            <div class="card">
              <h2>Act on it</h2>
              {allowed.has('transfer') && (
                <ActionForm
                  label="Transfer"
                  submit="Sign and transfer"
                  spec={() => ({
                    name: 'transfer',
                    params: { object_id: id, to: to.trim().toLowerCase() },
                  })}
                  onDone={after('Transferred.')}
                >
                  <Field
                    label="New owner’s address (0x…)"
                    required
                    maxLength={42}
                    value={to}
                    onValue={setTo}
                  />
                </ActionForm>
              )}
              {allowed.has('update') && (
                <ActionForm
                  label="Update"
                  submit="Sign and update"
                  spec={() => ({
                    name: 'update',
                    params: { object_id: id, custom: customOf(custom) },
                  })}
                  onDone={after('Updated.')}
                >
                  <Field
                    label="New custom (JSON object)"
                    required
                    value={custom}
                    placeholder={JSON.stringify(o.custom)}
                    onValue={setCustom}
                  />
                </ActionForm>
              )}
              {allowed.has('drop') && !o.is_dropped && (
                <ActionForm
                  label="Drop"
                  submit="Sign and drop"
                  spec={() => ({
                    name: 'drop',
                    params: {
                      object_id: id,
                      location: { latitude: Number(lat), longitude: Number(lon) },
                    },
                  })}
                  onDone={after('Dropped.')}
                >
                  <div class="row">
                    <Field
                      label="Latitude"
                      required
                      inputMode="decimal"
                      value={lat}
                      onValue={setLat}
                    />
                    <Field
                      label="Longitude"
                      required
                      inputMode="decimal"
                      value={lon}
                      onValue={setLon}
                    />
                  </div>
                </ActionForm>
              )}
              {allowed.has('redeem') && !o.is_dropped && (
                <ActionForm
                  label="Redeem"
                  submit="Sign and redeem"
                  spec={() => ({ name: 'redeem', params: { object_id: id } })}
                  onDone={after('Redeemed.')}
                />
              )}
            </div>
          )}
          <History id={id} tick={tick} />
        </>
      )}
    </section>
  );
}

/** One object of the organization: its faces, fields, hashes, history and actions. */
export function ObjectPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  return <RequireSignIn organization>{() => <ObjectView id={id} />}</RequireSignIn>;
}
