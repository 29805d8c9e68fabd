import type { BatchRecord } from '@ons/sdk';
import { Fragment, type ComponentChild } from 'preact';
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { DataTable } from '../components/data-table.js';
import { ErrorMessage } from '../components/error-message.js';
import { Progress } from '../components/progress.js';
import { ReceiptCheck } from '../components/receipt-check.js';
import { formatDate } from '../lib/format.js';
import { useAction, useLoad } from '../lib/hooks.js';
import { fieldLabel } from '../lib/labels.js';
import { ons } from '../lib/session.js';
import { verifyBatchInBrowser, type BatchVerification } from '../lib/verify-batch.js';
import { pathOf, paths } from '../paths.js';

const text = (v: string | null | undefined) => (v ? <code>{v}</code> : '—');

/** Every field of a batch (docs/batches.md), as the service answers it, labelled in words. */
function BatchFields({ b }: { b: BatchRecord }) {
  const rows: [string, ComponentChild][] = [
    ['id', text(b.id)],
    ['sequence', b.sequence],
    ['status', b.status],
    ['hash', text(b.hash)],
    ['prev_hash', text(b.prev_hash)],
    ['integrity_root', text(b.integrity_root)],
    ['prev_integrity_root', text(b.prev_integrity_root)],
    ['sender', text(b.sender)],
    ['l2_tx_hash', text(b.l2_tx_hash)],
    ['l2_finalization_tx_hash', text(b.l2_finalization_tx_hash)],
    ['commitment', text(b.commitment)],
    ['actions_hash', text(b.actions_hash)],
    ['actions_count', b.actions_count],
    ['total_fee', `${b.total_fee} ONS`],
    ['total_fee_wei', text(b.total_fee_wei)],
    ['version', b.version],
    ['ipfs_url', text(b.ipfs_url)],
    ['superseded_ipfs_urls', b.superseded_ipfs_urls.join(' ') || '—'],
    ['proof.type', text(b.proof?.type)],
    ['proof.value', text(b.proof?.value)],
    ['proof.public_values', text(b.proof?.public_values)],
    ['proof.vkey', text(b.proof?.vkey)],
    ['proof.message', b.proof?.message || '—'],
    ['proof_id', text(b.proof_id)],
    ['error', b.error || '—'],
    ['challenge_window_end', formatDate(b.challenge_window_end)],
    ['when_completed', formatDate(b.when_completed)],
    ['when_modified', formatDate(b.when_modified)],
    ['when_created', formatDate(b.when_created)],
  ];
  return (
    <dl class="facts wrap" data-testid="batch-fields">
      {rows.map(([k, v]) => (
        <Fragment key={k}>
          <dt title={k}>{fieldLabel(k)}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Verify({ batch }: { batch: BatchRecord }) {
  const [step, setStep] = useState<{ label: string; done: number; total: number } | null>(null);
  const [result, setResult] = useState<BatchVerification | null>(null);
  const run = useAction(async () => {
    setResult(null);
    setResult(
      await verifyBatchInBrowser(batch, (label, done, total) => setStep({ label, done, total })),
    );
  });
  if (!batch.hash) {
    return <p>This batch is not sealed yet: it can be verified once it is.</p>;
  }
  return (
    <>
      <p>
        Re-checks this batch here, with the SDK’s offline verifier: the content against its header,
        the roots, the chain to the previous batch, the attestation, and each action’s inclusion
        proof. Only the network’s public key is trusted.
      </p>
      <button type="button" disabled={run.busy} onClick={() => void run.run()}>
        Verify in the browser
      </button>
      {run.busy && step && (
        <>
          <Progress label={step.label} />
          <progress max={step.total} value={step.done} aria-label="Verification progress" />
        </>
      )}
      <ErrorMessage error={run.error} />
      {result && (
        <div data-testid="verdict">
          <p class={result.ok ? 'notice' : 'error'} role="status">
            {!result.ok
              ? 'Not verified: a check failed (see below).'
              : result.checks.some((c) => c.state === 'skipped')
                ? 'Verified: every check that could be made passed; some were skipped (see below).'
                : 'Verified: every check passed.'}
          </p>
          <DataTable
            columns={['Check', 'Result']}
            rows={result.checks}
            rowKey={(c) => c.label}
            rowClass={(c) => `check-${c.state.replace(' ', '-')}`}
            cells={(c) => [
              c.label,
              <>
                {c.state}
                {c.detail && <div class="hint">{c.detail}</div>}
              </>,
            ]}
          />
        </div>
      )}
    </>
  );
}

/** One batch (public): its fields, its actions, and "verify in the browser". */
export function ExplorerBatchPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const batch = useLoad(
    () => ons.GET('/batches/{batchId}', { params: { path: { batchId: id } } }),
    [id],
  );
  const b = batch.data;
  return (
    <section>
      <p>
        <a href={paths.explorer}>← All batches</a>
      </p>
      <h1>{b ? `Batch ${b.sequence}` : 'Batch'}</h1>
      {batch.loading && <Progress label="Loading the batch…" />}
      <ErrorMessage error={batch.error} />
      {b && (
        <>
          <h2>Verify</h2>
          <Verify batch={b} />
          <h2>Fields</h2>
          <BatchFields b={b} />
          <h2>Actions ({b.affected_actions.length})</h2>
          <DataTable
            columns={['Action', 'Name', 'Alias', 'Hash', 'Receipt']}
            rows={b.affected_actions}
            empty="No actions."
            rowKey={(a) => a.id}
            cells={(a) => [
              <code>{a.id}</code>,
              a.private ? <em>private</em> : a.name,
              a.private ? (
                <code>{a.alias}</code>
              ) : a.alias.startsWith('obj_') ? (
                <a href={pathOf(paths.explorerObject, a.alias)}>{a.alias}</a>
              ) : (
                a.alias || '—'
              ),
              <code class="hash">{a.hash}</code>,
              a.private ? '—' : <ReceiptCheck actionId={a.id} />,
            ]}
          />
        </>
      )}
    </section>
  );
}
