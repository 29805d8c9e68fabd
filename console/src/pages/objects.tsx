import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ActionForm } from '../components/action-form.js';
import { ACTIONS, PagedTable } from '../components/data-table.js';
import { CheckField, Field, SelectField } from '../components/field.js';
import { Notice } from '../components/form-card.js';
import { Faces, type Face } from '../components/faces.js';
import { TemplateName } from '../components/template-name.js';
import { usePaged } from '../components/pager.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { TransferForm } from '../components/transfer-form.js';
import { formatDate } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';

interface TemplateInfo {
  id: string;
  name: string;
  faces: Face[];
}

function Templates({ onLoaded }: { onLoaded: (t: TemplateInfo[]) => void }) {
  const list = usePaged(async (next) => {
    const page = await ons.GET('/templates', {
      params: { query: { limit: 20, ...(next ? { next } : {}) } },
    });
    onLoaded(page.templates);
    return { items: page.templates, next: page.next, has_more: page.has_more };
  }, []);
  return (
    <>
      <h2>Templates</h2>
      <PagedTable
        list={list}
        empty="No templates yet."
        loading="Loading templates…"
        more="More templates"
        testId="templates"
        columns={['Template', 'Actions', 'Faces']}
        rowKey={(t) => t.id}
        cells={(t) => [
          <>
            <TemplateName t={t} />
            {t.description && <p>{t.description}</p>}
          </>,
          t.actions.join(', ') || '—',
          <Faces faces={t.faces} name={t.name} />,
        ]}
      />
    </>
  );
}

/** Mints an object from one of the organization's templates, signed in this browser. */
function Mint({ templates }: { templates: Map<string, TemplateInfo> }) {
  const { route } = useLocation();
  const [templateId, setTemplateId] = useState('');
  const [name, setName] = useState('');
  const [custom, setCustom] = useState('');
  const chosen = templateId || ([...templates.keys()][0] ?? '');
  if (templates.size === 0) {
    return (
      <p>
        To mint an object you need a template first: <a href={paths.templates}>create one</a>.
      </p>
    );
  }
  return (
    <div class="card">
      <h2>Mint an object</h2>
      <ActionForm
        label="Mint an object"
        submit="Sign and mint"
        spec={() => {
          let parsed: unknown = {};
          if (custom.trim() !== '') {
            try {
              parsed = JSON.parse(custom);
            } catch (err) {
              throw new Error(`custom is not JSON: ${(err as Error).message}`, { cause: err });
            }
          }
          return {
            name: 'mint',
            params: {
              template_id: chosen,
              ...(name.trim() ? { metadata: { name: name.trim() } } : {}),
              ...(custom.trim() ? { custom: parsed } : {}),
            },
          };
        }}
        onDone={(answer) => route(pathOf(paths.object, answer.object.id))}
      >
        <SelectField
          label="Template"
          value={chosen}
          onValue={setTemplateId}
          options={[...templates.values()].map((t) => [t.id, t.name] as const)}
        />
        <Field label="Name (optional)" maxLength={200} value={name} onValue={setName} />
        <Field
          label="custom (JSON object, optional)"
          value={custom}
          placeholder='{"seat": "12A"}'
          onValue={setCustom}
        />
      </ActionForm>
    </div>
  );
}

function Objects({ templates }: { templates: Map<string, TemplateInfo> }) {
  const canAct = usePermissions().has('actions.create');
  const me = useLoad(() => ons.GET('/wallets/me'), []);
  const address = me.data?.address.toLowerCase();
  const [mine, setMine] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  // Keyed on the query alone: the wallet's address arriving later must not reload (and so
  // briefly empty) the list when it does not filter it.
  const owner = mine ? address : undefined;
  const list = usePaged(
    async (next) => {
      const page = await ons.GET('/objects', {
        params: {
          query: {
            limit: 20,
            order: 'desc',
            ...(owner ? { owner } : {}),
            ...(next ? { next } : {}),
          },
        },
      });
      return { items: page.objects, next: page.next, has_more: page.has_more };
    },
    [owner],
  );
  return (
    <>
      <h2>Objects</h2>
      <CheckField
        inline
        label="Only objects I own"
        checked={mine}
        disabled={!address}
        onChecked={setMine}
      />
      {done && <Notice>{done}</Notice>}
      <PagedTable
        list={list}
        error={list.error ?? me.error}
        busy={me.loading}
        empty="No objects."
        loading="Loading objects…"
        more="More objects"
        testId="objects"
        columns={['Object', 'Owner', 'Faces', ACTIONS]}
        rowKey={(o) => o.id}
        cells={(o) => {
          const t = templates.get(o.template_id);
          const name = o.metadata.name || o.id;
          const owned = address !== undefined && o.owner.toLowerCase() === address;
          return [
            <>
              {name}
              <div class="hint">
                <code>{o.id}</code>
                <br />
                {t ? t.name : <code>{o.template_id}</code>} · {formatDate(o.when_modified)}
              </div>
              <a href={pathOf(paths.object, o.id)}>Open {name}</a>
              {' · '}
              <a href={pathOf(paths.explorerObject, o.id)}>Public page</a>
            </>,
            <>
              <code class="owner">{o.owner}</code>
              {owned && <div class="hint">you</div>}
            </>,
            t ? <Faces faces={t.faces} name={name} /> : '—',
            owned && canAct && (
              <>
                <button
                  type="button"
                  class="secondary"
                  aria-expanded={open === o.id}
                  onClick={() => setOpen(open === o.id ? null : o.id)}
                >
                  Transfer {name}
                </button>
                {open === o.id && (
                  <TransferForm
                    objectId={o.id}
                    name={name}
                    onDone={(to) => {
                      setOpen(null);
                      setDone(`${name} now belongs to ${to}.`);
                      list.reload();
                    }}
                  />
                )}
              </>
            ),
          ];
        }}
      />
    </>
  );
}

/** The organization's templates and objects, faces rendered; transfer an object you own. */
export function ObjectsPage() {
  const held = usePermissions();
  const [templates, setTemplates] = useState<Map<string, TemplateInfo>>(new Map());
  return (
    <RequireSignIn organization>
      {() => (
        <section>
          <h1>Objects</h1>
          <p>
            Your organization’s templates and the objects made from them. An object you own can be
            transferred: your passkey signs the transfer in this browser.
          </p>
          <Templates
            onLoaded={(list) =>
              setTemplates((m) => new Map([...m, ...list.map((t) => [t.id, t] as const)]))
            }
          />
          {held.has('actions.create') && held.has('objects.create') && (
            <Mint templates={templates} />
          )}
          <Objects templates={templates} />
        </section>
      )}
    </RequireSignIn>
  );
}
