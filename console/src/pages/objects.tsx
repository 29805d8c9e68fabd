import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { Faces, type Face } from '../components/faces.js';
import { usePaged } from '../components/pager.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { TransferForm } from '../components/transfer-form.js';
import { formatDate } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
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
      <ErrorMessage error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && <p>No templates yet.</p>}
      {list.items.length > 0 && (
        <table data-testid="templates">
          <thead>
            <tr>
              <th scope="col">Template</th>
              <th scope="col">Actions</th>
              <th scope="col">Faces</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((t) => (
              <tr key={t.id}>
                <td>
                  {t.name}
                  <div class="hint">
                    <code>{t.id}</code>
                    <br />
                    {t.category || 'no category'} · {t.is_public ? 'public' : 'private'}
                  </div>
                  {t.description && <p>{t.description}</p>}
                </td>
                <td>{t.actions.join(', ') || '—'}</td>
                <td>
                  <Faces faces={t.faces} name={t.name} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.loading && <Progress label="Loading templates…" />}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" onClick={list.more}>
          More templates
        </button>
      )}
    </>
  );
}

function Objects({ templates }: { templates: Map<string, TemplateInfo> }) {
  const me = useLoad(() => ons.GET('/wallets/me'), []);
  const address = me.data?.address.toLowerCase();
  const [mine, setMine] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const list = usePaged(
    async (next) => {
      const page = await ons.GET('/objects', {
        params: {
          query: {
            limit: 20,
            order: 'desc',
            ...(mine && address ? { owner: address } : {}),
            ...(next ? { next } : {}),
          },
        },
      });
      return { items: page.objects, next: page.next, has_more: page.has_more };
    },
    [mine, address],
  );
  return (
    <>
      <h2>Objects</h2>
      <label class="inline">
        <input
          type="checkbox"
          checked={mine}
          disabled={!address}
          onChange={(e) => setMine(e.currentTarget.checked)}
        />{' '}
        Only objects I own
      </label>
      <ErrorMessage error={list.error ?? me.error} />
      {done && (
        <p class="notice" role="status">
          {done}
        </p>
      )}
      {!list.loading && !list.error && list.items.length === 0 && <p>No objects.</p>}
      {list.items.length > 0 && (
        <table data-testid="objects">
          <thead>
            <tr>
              <th scope="col">Object</th>
              <th scope="col">Owner</th>
              <th scope="col">Faces</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((o) => {
              const t = templates.get(o.template_id);
              const name = o.metadata.name || o.id;
              const owned = address !== undefined && o.owner.toLowerCase() === address;
              return (
                <tr key={o.id}>
                  <td>
                    {name}
                    <div class="hint">
                      <code>{o.id}</code>
                      <br />
                      {t ? t.name : <code>{o.template_id}</code>} · {formatDate(o.when_modified)}
                    </div>
                    <a href={pathOf(paths.explorerObject, o.id)}>Public page</a>
                  </td>
                  <td>
                    <code class="owner">{o.owner}</code>
                    {owned && <div class="hint">you</div>}
                  </td>
                  <td>{t ? <Faces faces={t.faces} name={name} /> : '—'}</td>
                  <td>
                    {owned && (
                      <button
                        type="button"
                        class="secondary"
                        aria-expanded={open === o.id}
                        onClick={() => setOpen(open === o.id ? null : o.id)}
                      >
                        Transfer {name}
                      </button>
                    )}
                    {owned && open === o.id && (
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
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {(list.loading || me.loading) && <Progress label="Loading objects…" />}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" onClick={list.more}>
          More objects
        </button>
      )}
    </>
  );
}

/** The organization's templates and objects, faces rendered; transfer an object you own. */
export function ObjectsPage() {
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
          <Objects templates={templates} />
        </section>
      )}
    </RequireSignIn>
  );
}
