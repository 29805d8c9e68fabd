import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ErrorMessage } from '../components/error-message.js';
import { usePaged } from '../components/pager.js';
import { Progress } from '../components/progress.js';
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
      <label>
        Object id
        <input
          name="object-id"
          required
          maxLength={100}
          value={id}
          onInput={(e) => setId(e.currentTarget.value)}
        />
      </label>
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
      <h2>A public object and its history</h2>
      <ObjectLookup />
      <h2>Batches, newest first</h2>
      <ErrorMessage error={list.error} />
      {!list.loading && !list.error && list.items.length === 0 && <p>No batches yet.</p>}
      {list.items.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Sequence</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
              <th scope="col">Total fee (ONS)</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((b) => (
              <tr key={b.id}>
                <td>
                  <a href={pathOf(paths.explorerBatch, b.id)}>Batch {b.sequence}</a>
                </td>
                <td>{b.status}</td>
                <td>{b.actions_count}</td>
                <td>{b.total_fee}</td>
                <td>{formatDate(b.when_created)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.loading && <Progress label="Loading batches…" />}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" onClick={list.more}>
          Older batches
        </button>
      )}
    </section>
  );
}
