import {
  httpSource,
  verifyActionInclusion,
  verifyBatch,
  type BatchRecord,
  type ProofRecord,
  type Verdict,
} from '@ons/sdk';
import { ons } from './session.js';

/**
 * "Verify in the browser" (issue 19 item 6): the SDK's offline checks (sdk/src/verify/, all
 * WebCrypto and @noble: nothing of Node) run here on one batch, against the bytes the service
 * serves. Nothing is trusted but the network's batch public key.
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

/** The batch sealed just before this one (sequence - 1), from the newest-first list. */
async function previousOf(batch: BatchRecord): Promise<BatchRecord | null> {
  if (batch.sequence <= 1) return null;
  let next: string | undefined;
  for (let page = 0; page < 20; page++) {
    const list = await ons.GET('/batches', {
      params: {
        query: {
          order: 'desc',
          limit: 100,
          'when_created[$lte]': batch.when_created,
          ...(next ? { next } : {}),
        },
      },
    });
    const found = list.batches.find((b) => b.sequence === batch.sequence - 1);
    if (found) return found;
    if (!list.has_more) break;
    next = list.next;
  }
  throw new Error(`The previous batch (sequence ${batch.sequence - 1}) was not found.`);
}

export interface BatchVerification {
  ok: boolean;
  checks: CheckResult[];
}

/**
 * Runs the checks on a sealed batch: its content (roots, chain, attestation) and the inclusion
 * proof of each of its actions. `onProgress` says what is being checked.
 */
export async function verifyBatchInBrowser(
  batch: BatchRecord,
  onProgress: (label: string, done: number, total: number) => void,
): Promise<BatchVerification> {
  const source = httpSource(window.location.origin);
  const actions = batch.affected_actions;
  const total = 3 + actions.length;
  let done = 0;
  const step = (label: string) => onProgress(label, done++, total);

  step('Reading the network’s batch public key…');
  const network = await ons.GET('/public/network');
  step('Finding the previous batch…');
  const previous = await previousOf(batch);
  step('Downloading the batch content and checking it…');
  const content = await source.bytes(`/batches/${encodeURIComponent(batch.id)}/content`);
  const checks: CheckResult[] =
    content === null
      ? [{ label: 'The content is served', state: 'failed', detail: 'content: no content served' }]
      : batchChecks(
          await verifyBatch(batch, content, {
            batchPublicKey: network.batch_public_key,
            previous,
          }),
        );
  for (const action of actions) {
    step(`Checking the inclusion proof of ${action.id}…`);
    const label = `Action ${action.id} (${action.name}) is in actions_hash`;
    const proof = await source.json<ProofRecord>(
      `/batches/${encodeURIComponent(batch.id)}/proofs/${encodeURIComponent(action.id)}`,
    );
    if (proof === null) {
      checks.push({ label, state: 'failed', detail: 'proof: no proof served' });
      continue;
    }
    const v = verifyActionInclusion(action, proof, batch);
    checks.push(
      v.ok
        ? { label, state: 'passed' }
        : { label, state: 'failed', detail: `${v.failed}: ${v.reason}` },
    );
  }
  onProgress('Done', total, total);
  return { ok: checks.every((c) => c.state !== 'failed' && c.state !== 'not checked'), checks };
}
