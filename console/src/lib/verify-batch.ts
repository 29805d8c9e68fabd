import {
  httpSource,
  verifySealedBatch,
  type BatchRecord,
  type SealedBatchLine,
  type Verdict,
} from '@ons/sdk';

/**
 * "Verify in the browser" (issue 19 item 6): the SDK's verifier (sdk/src/verify/, all
 * WebCrypto and @noble: nothing of Node) runs here on one batch, against the bytes the
 * service serves. Nothing is trusted but the network's batch public key.
 */

/** One line of the verdict a person reads. */
export interface CheckResult {
  label: string;
  state: 'passed' | 'failed' | 'skipped' | 'not checked';
  /** The check that failed and why (the SDK's words). */
  detail?: string;
}

/** verifyBatch's checks, in the order it makes them (sdk/src/verify/batches.ts). */
const BATCH_CHECKS = [
  { key: 'content', label: 'The content is JSON' },
  { key: 'header', label: "The content's header is the explorer's" },
  { key: 'ipfs_url', label: 'ipfs_url is the CID of the content' },
  { key: 'actions_count', label: 'actions_count is the number of its actions' },
  { key: 'actions_hash', label: 'actions_hash is the Merkle root of its action hashes' },
  { key: 'total_fee_wei', label: 'total_fee_wei is the sum of its fees' },
  { key: 'integrity_root', label: 'integrity_root is the tree over its objects' },
  { key: 'commitment', label: 'commitment is H(prev_integrity_root ‖ integrity_root ‖ …)' },
  { key: 'hash', label: 'hash is H(header)' },
  { key: 'chain', label: 'It chains to the previous batch (sequence, prev_hash, …)' },
  { key: 'proof', label: "The Ed25519 attestation verifies with the network's key" },
] as const;

/** Which of BATCH_CHECKS a failed verdict names. */
function checkOf(v: Verdict): string {
  if (v.reason?.startsWith("the content's")) return 'header';
  switch (v.failed) {
    case 'actions':
      return 'actions_count';
    case 'sequence':
    case 'prev_hash':
    case 'prev_integrity_root':
      return 'chain';
    case 'proof_id':
      return 'proof';
    case undefined:
      return 'content';
    default:
      return v.failed;
  }
}

/** The batch verdict as one line per check: passed up to the failure, not checked after. */
export function batchChecks(v: Verdict): CheckResult[] {
  const failedAt = v.ok ? -1 : BATCH_CHECKS.findIndex((c) => c.key === checkOf(v));
  return BATCH_CHECKS.map((c, i): CheckResult => {
    if (v.ok) return { label: c.label, state: v.skipped?.includes(c.key) ? 'skipped' : 'passed' };
    if (i < failedAt || failedAt === -1) return { label: c.label, state: 'passed' };
    if (i === failedAt) {
      return { label: c.label, state: 'failed', detail: `${v.failed}: ${v.reason}` };
    }
    return { label: c.label, state: 'not checked' };
  });
}

const lineOf = (label: string, v: Verdict): CheckResult =>
  v.ok
    ? { label, state: 'passed' }
    : { label, state: 'failed', detail: `${v.failed}: ${v.reason}` };

/** The words of one line of the SDK's report. */
function labelOf(line: SealedBatchLine): string {
  switch (line.kind) {
    case 'chain':
      return `Object ${line.id}'s history replays to its hashes`;
    case 'signature':
      return `Action ${line.id}'s ${line.detail === 'webauthn' ? 'passkey' : 'crypto wallet'} signature`;
    case 'inclusion':
      return `Action ${line.id} (${line.detail}) is in actions_hash`;
    case 'batch':
      return 'The batch';
  }
}

export interface BatchVerification {
  ok: boolean;
  checks: CheckResult[];
}

/**
 * Runs the SDK's verifySealedBatch (the same code and the same public reads as `ons-verify`:
 * signer links, template versions, published passkeys) on a sealed batch, and says its
 * report as one line per check. `onProgress` says what is being checked.
 */
export async function verifyBatchInBrowser(
  batch: BatchRecord,
  onProgress: (label: string, done: number, total: number) => void,
): Promise<BatchVerification> {
  const report = await verifySealedBatch(httpSource(window.location.origin), batch, {
    onProgress,
  });
  const batchLine = report.lines.find((l) => l.kind === 'batch');
  const checks: CheckResult[] = [
    ...(batchLine ? batchChecks(batchLine.verdict) : []),
    ...report.lines.filter((l) => l.kind !== 'batch').map((l) => lineOf(labelOf(l), l.verdict)),
  ];
  if (report.notPublic > 0 || report.overLimit > 0) {
    checks.push({
      label: `Objects not replayed (${report.notPublic} not public${report.overLimit > 0 ? `, ${report.overLimit} over the limit` : ''})`,
      state: 'skipped',
      detail:
        'their histories are not public (integrity_root is still recomputed from the content of a batch of version 2 or later)',
    });
  }
  return { ok: report.ok, checks };
}
