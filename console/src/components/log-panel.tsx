import { rootHex } from '@ons/sdk';
import { useLoad } from '../lib/hooks.js';
import { formatDate } from '../lib/format.js';
import { loadCheckpoint } from '../lib/log.js';
import { ErrorMessage } from './error-message.js';
import { Progress } from './progress.js';

/**
 * The explorer's view of the transparency log: the latest signed checkpoint (checked here
 * with the SDK against the log's key), and each witness with the time it cosigned it.
 */
export function LogPanel() {
  const latest = useLoad(loadCheckpoint, []);
  const d = latest.data;
  if (latest.loading) return <Progress label="Loading the log's checkpoint…" />;
  if (latest.error) return <ErrorMessage error={latest.error} />;
  if (!d) return <p>This service keeps no transparency log.</p>;
  const cp = d.checked.checkpoint;
  const cosigned = new Map(d.checked.cosignatures.map((c) => [c.key, c.timestamp]));
  return (
    <div data-testid="log-checkpoint">
      <p class={d.checked.ok ? 'notice' : 'error'} role="status">
        {d.checked.ok
          ? "The latest checkpoint is signed by the log's key (checked in your browser)."
          : `The latest checkpoint does not verify: ${d.checked.errors.join('; ')}`}
      </p>
      {cp && (
        <dl class="facts">
          <dt>Origin</dt>
          <dd>
            <code>{cp.origin}</code>
          </dd>
          <dt>Tree size (actions)</dt>
          <dd>{cp.size}</dd>
          <dt>Root hash</dt>
          <dd>
            <code class="hash">{rootHex(cp)}</code>
          </dd>
          {cp.batch && (
            <>
              <dt>Sealed by batch</dt>
              <dd>
                {cp.batch.sequence} (<code class="hash">{cp.batch.hash}</code>)
              </dd>
            </>
          )}
          <dt>Log key</dt>
          <dd>
            <code class="hash">{d.info.verifier_key}</code>
          </dd>
        </dl>
      )}
      <h3>Witnesses ({d.info.witnesses.length})</h3>
      {d.info.witnesses.length === 0 ? (
        <p>No witness is configured: nothing but the log itself vouches for this checkpoint.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Witness</th>
              <th scope="col">Cosigned this checkpoint</th>
            </tr>
          </thead>
          <tbody>
            {d.info.witnesses.map((w) => {
              const t = cosigned.get(w.verifier_key);
              return (
                <tr key={w.verifier_key}>
                  <td>
                    <code>{w.name}</code>
                  </td>
                  <td>{t === undefined ? 'no' : formatDate(new Date(t * 1000).toISOString())}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <details>
        <summary>The checkpoint as served</summary>
        <pre>{d.text}</pre>
      </details>
    </div>
  );
}
