import { useRoute } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { BatchLink } from '../components/batch-link.js';
import { PagedTable } from '../components/data-table.js';
import { Faces } from '../components/faces.js';
import { ObjectFacts } from '../components/object-facts.js';
import { usePaged } from '../components/pager.js';
import { Progress } from '../components/progress.js';
import { formatDate } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons } from '../lib/session.js';
import { paths } from '../paths.js';

function History({ id }: { id: string }) {
  const list = usePaged(
    async (next) => {
      const page = await ons.GET('/public/objects/{id}/history', {
        params: { path: { id }, query: { limit: 20, ...(next ? { next } : {}) } },
      });
      return { items: page.action_logs, next: page.next, has_more: page.has_more };
    },
    [id],
  );
  return (
    <>
      <h2>History, newest first</h2>
      <PagedTable
        list={list}
        loading="Loading the history…"
        more="Older actions"
        testId="history"
        columns={['When', 'Action', 'Signed by', 'Parameters', 'Batch']}
        rowKey={(a) => a.id}
        cells={(a) => [
          formatDate(a.when_created),
          <>
            {a.name}
            <div class="hint">
              <code>{a.id}</code>
            </div>
          </>,
          <>
            <code>{a.wallet}</code>
            <div class="hint">{a.signature_type === 'webauthn' ? 'passkey' : 'EOA'}</div>
          </>,
          <code>{JSON.stringify(a.params)}</code>,
          <BatchLink batchId={a.batch_id}>open batch</BatchLink>,
        ]}
      />
    </>
  );
}

/** A public object (no sign-in): its fields, its faces, and its history. */
export function ExplorerObjectPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const found = useLoad(
    () =>
      ons.GET('/public/objects', {
        params: { query: { id, include_faces: true, include_dropped: true, limit: 1 } },
      }),
    [id],
  );
  const o = found.data?.objects[0];
  const faces = found.data?.faces.filter((f) => f.template_id === o?.template_id) ?? [];
  return (
    <section>
      <p>
        <a href={paths.explorer}>← Explorer</a>
      </p>
      <h1>{o ? o.metadata.name || 'Object' : 'Object'}</h1>
      <p>
        <code>{id}</code>
      </p>
      {found.loading && <Progress label="Loading the object…" />}
      <ErrorMessage error={found.error} />
      {found.data && !o && <p>No public object has this id.</p>}
      {o && (
        <>
          <ObjectFacts o={o} />
          <h2>Faces</h2>
          <Faces faces={faces.map((f) => f.face)} name={o.metadata.name || o.id} />
          <History id={id} />
        </>
      )}
    </section>
  );
}
