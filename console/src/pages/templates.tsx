import { useState } from 'preact/hooks';
import { DataTable, PagedTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { Faces } from '../components/faces.js';
import { Notice } from '../components/form-card.js';
import { usePaged } from '../components/pager.js';
import { Progress } from '../components/progress.js';
import { RequireSignIn } from '../components/require-sign-in.js';
import { TemplateForm } from '../components/template-form.js';
import { TemplateName } from '../components/template-name.js';
import { formatDate } from '../lib/format.js';
import { useLoad } from '../lib/hooks.js';
import { ons, usePermissions } from '../lib/session.js';
import { paths } from '../paths.js';

/** A template's versions, newest first (each is what object chains hashed while it held). */
function Versions({ id }: { id: string }) {
  const versions = useLoad(
    () => ons.GET('/templates/{id}/versions', { params: { path: { id }, query: { limit: 20 } } }),
    [id],
  );
  return (
    <>
      <h3>Versions</h3>
      {versions.loading && <Progress label="Loading versions…" />}
      <ErrorMessage error={versions.error} />
      <DataTable
        testId="versions"
        columns={['Version', 'Name', 'Faces', 'Since']}
        rows={versions.data?.versions}
        rowKey={(v) => v.version}
        cells={(v) => [
          v.version,
          v.name,
          v.faces.map((f) => f.id).join(', ') || '—',
          formatDate(v.when_created),
        ]}
      />
      {versions.data?.has_more && <p class="hint">Older versions are not shown.</p>}
    </>
  );
}

function Editor({ id, onSaved }: { id: string; onSaved: () => void }) {
  const template = useLoad(() => ons.GET('/templates/{id}', { params: { path: { id } } }), [id]);
  const [saved, setSaved] = useState(0);
  return (
    <div>
      {template.loading && <Progress label="Loading the template…" />}
      <ErrorMessage error={template.error} />
      {template.data && (
        <TemplateForm
          key={`${id}:${saved}`}
          template={template.data}
          onSaved={() => {
            setSaved(saved + 1);
            template.reload();
            onSaved();
          }}
        />
      )}
      {saved > 0 && <Notice>Saved.</Notice>}
      <Versions key={`${id}:${saved}`} id={id} />
    </div>
  );
}

function Templates() {
  const held = usePermissions();
  const [editing, setEditing] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  const list = usePaged(async (next) => {
    const page = await ons.GET('/templates', {
      params: { query: { limit: 20, ...(next ? { next } : {}) } },
    });
    return { items: page.templates, next: page.next, has_more: page.has_more };
  }, []);
  return (
    <section>
      <h1>Templates</h1>
      <p>
        A template says what its objects are: how they look (faces), what may be done with them
        (actions) and what their <code>custom</code> data holds. Objects are minted from one.
      </p>
      {created && (
        <Notice>
          Template created. Next: <a href={paths.objects}>mint an object from it</a>.
        </Notice>
      )}
      {!creating && held.has('templates.create') && (
        <button
          type="button"
          onClick={() => {
            setCreating(true);
            setEditing(null);
          }}
        >
          New template
        </button>
      )}
      {creating && (
        <TemplateForm
          onSaved={(id) => {
            setCreating(false);
            setCreated(id);
            list.reload();
          }}
        />
      )}
      <PagedTable
        list={list}
        empty={
          creating
            ? undefined
            : held.has('templates.create')
              ? 'No templates yet: press “New template” to make the first one.'
              : 'No templates yet.'
        }
        loading="Loading templates…"
        more="More templates"
        testId="templates"
        columns={['Template', 'Actions', 'Faces', { hidden: 'Edit' }]}
        rowKey={(t) => t.id}
        cells={(t) => [
          <TemplateName t={t} />,
          t.actions.join(', ') || '—',
          <Faces faces={t.faces} name={t.name} />,
          held.has('templates.update') && (
            <button
              type="button"
              class="secondary"
              aria-label={`Edit ${t.name}`}
              onClick={() => {
                setEditing(t.id);
                setCreating(false);
              }}
            >
              Edit
            </button>
          ),
        ]}
      />
      {editing && <Editor id={editing} onSaved={list.reload} />}
    </section>
  );
}

/** The organization's templates: create, edit, and each one's versions (issue 32 item 1). */
export function TemplatesPage() {
  return <RequireSignIn>{() => <Templates />}</RequireSignIn>;
}
