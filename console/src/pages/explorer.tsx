import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { PagedTable } from '../components/data-table.js';
import { Field } from '../components/field.js';
import { LogPanel } from '../components/log-panel.js';
import { usePaged } from '../components/pager.js';
import { formatDate } from '../lib/format.js';
import { ons } from '../lib/session.js';
import { pathOf, paths } from '../paths.js';

/** The explorer's first page (public, no sign-in): the network's batches, newest first. */
function ObjectLookup() {
  const [id, setId] = useState('');
  const { route } = useLocation();
  return (
    <form
      class="row"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim()) route(pathOf(paths.explorerObject, id.trim()));
      }}
    >
      <Field
        label="Object id"
        name="object-id"
        required
        maxLength={100}
        value={id}
        onValue={setId}
      />
      <button type="submit">Open the object</button>
    </form>
  );
}

export function ExplorerPage() {
  const list = usePaged(async (next) => {
    const page = await ons.GET('/batches', {
      params: { query: { order: 'desc', limit: 20, ...(next ? { next } : {}) } },
    });
    return { items: page.batches, next: page.next, has_more: page.has_more };
  }, []);
  return (
    <section>
      <h1>Explorer</h1>
      <p>
        Every action on the network is sealed into a batch. Open a batch to see its fields and
        actions, and verify it in your browser.
      </p>
      <h2>The transparency log</h2>
      <LogPanel />
      <h2>A public object and its history</h2>
      <ObjectLookup />
      <h2>Batches, newest first</h2>
      <PagedTable
        list={list}
        empty="No batches yet."
        loading="Loading batches…"
        more="Older batches"
        columns={['Sequence', 'Status', 'Actions', 'Total fee (ONS)', 'Created']}
        rowKey={(b) => b.id}
        cells={(b) => [
          <a href={pathOf(paths.explorerBatch, b.id)}>Batch {b.sequence}</a>,
          b.status,
          b.actions_count,
          b.total_fee,
          formatDate(b.when_created),
        ]}
      />
    </section>
  );
}
