import {
  httpSource,
  verifyActionInclusion,
  verifyActionSignature,
  verifyBatch,
  verifyObjectChain,
  type ActionRecord,
  type BatchRecord,
  type ProofRecord,
  type PublicCredential,
  type PublicObject,
  type PublicTemplate,
  type Source,
  type Verdict,
} from '@ons/sdk';
import { ons } from './session.js';

/**
 * "Verify in the browser" (issue 19 item 6): the SDK's offline checks (sdk/src/verify/, all
 * WebCrypto and @noble: nothing of Node) run here on one batch, against the bytes the service
 * serves: the batch itself (c), its actions' inclusion proofs (d), and for the public objects
 * it touched their replayed histories (b) and its actions' signatures (a). Nothing is trusted
 * but the network's batch public key.
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

const enc = encodeURIComponent;
const lineOf = (label: string, v: Verdict): CheckResult =>
  v.ok
    ? { label, state: 'passed' }
    : { label, state: 'failed', detail: `${v.failed}: ${v.reason}` };

/** At most this many objects of a batch are replayed (each needs its whole history). */
const MAX_OBJECTS = 50;

/** Every item of a listed route, following `next` (at most `max` pages). */
async function listAll<T>(source: Source, path: string, key: string, max = 20): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = null;
  for (let i = 0; i < max; i++) {
    const url: string = next === null ? path : `${path}&next=${enc(next)}`;
    const page = await source.json<Record<string, unknown>>(url);
    if (page === null) break;
    out.push(...(page[key] as T[]));
    if (page.has_more !== true || typeof page.next !== 'string') return out;
    next = page.next;
  }
  return out;
}

/** The objects a batch's content names, and which of its actions touched each. */
function objectsOf(content: Uint8Array): Map<string, string[]> {
  const byObject = new Map<string, string[]>();
  try {
    const parsed = JSON.parse(new TextDecoder().decode(content)) as {
      actions?: { id: string; object_id: string | null }[];
    };
    for (const a of parsed.actions ?? []) {
      if (typeof a.object_id !== 'string') continue;
      byObject.set(a.object_id, [...(byObject.get(a.object_id) ?? []), a.id]);
    }
  } catch {
    // not JSON: verifyBatch says so
  }
  return byObject;
}

/**
 * (a) and (b) of the SDK's verifier for the public objects a batch touched: each object's
 * history replayed to its hashes, and the signature of each of the batch's actions on it.
 * Answers the lines, and the integrity hash each action left (for `integrity_root`).
 */
async function replayObjects(
  source: Source,
  network: string,
  byObject: Map<string, string[]>,
  step: (label: string) => void,
): Promise<{ checks: CheckResult[]; integrityByAction: Map<string, string> }> {
  const checks: CheckResult[] = [];
  const integrityByAction = new Map<string, string>();
  const credentials = new Map<string, Promise<PublicCredential | null>>();
  const credential = (id: string) => {
    let c = credentials.get(id);
    if (!c)
      credentials.set(id, (c = source.json<PublicCredential>(`/public/credentials/${enc(id)}`)));
    return c;
  };
  let privateObjects = 0;
  for (const [objectId, actionIds] of [...byObject].slice(0, MAX_OBJECTS)) {
    step(`Replaying the history of ${objectId}…`);
    const found = await source.json<{ objects: PublicObject[] }>(
      `/public/objects?id=${enc(objectId)}&include_dropped=true`,
    );
    const object = found?.objects[0];
    if (!object) {
      privateObjects++;
      continue;
    }
    const [history, template] = await Promise.all([
      listAll<ActionRecord>(
        source,
        `/public/objects/${enc(objectId)}/history?order=asc&limit=100`,
        'action_logs',
      ),
      source.json<PublicTemplate>(`/public/templates/${enc(object.template_id)}`),
    ]);
    if (!template) {
      checks.push({
        label: `Object ${objectId}'s history replays to its hashes`,
        state: 'failed',
        detail: 'template: its template is not public',
      });
      continue;
    }
    const chain = verifyObjectChain(object, history, template);
    checks.push(lineOf(`Object ${objectId}'s history replays to its hashes`, chain.verdict));
    for (const [k, v] of chain.integrityByAction) integrityByAction.set(k, v);
    for (const record of history.filter((a) => actionIds.includes(a.id))) {
      const kind = record.signature_type === 'webauthn' ? 'passkey' : 'EOA';
      checks.push(
        lineOf(
          `Action ${record.id}'s ${kind} signature`,
          await verifyActionSignature(record, { network, credential }),
        ),
      );
    }
  }
  if (privateObjects > 0 || byObject.size > MAX_OBJECTS) {
    checks.push({
      label: `Objects not replayed (${privateObjects} not public${byObject.size > MAX_OBJECTS ? `, ${byObject.size - MAX_OBJECTS} over ${MAX_OBJECTS}` : ''})`,
      state: 'skipped',
      detail:
        'their histories are not public (integrity_root is still recomputed from the content of a batch of version 2 or later)',
    });
  }
  return { checks, integrityByAction };
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
  let total = 4 + actions.length;
  let done = 0;
  const step = (label: string) => onProgress(label, done++, total);

  step('Reading the network’s batch public key…');
  const network = await ons.GET('/public/network');
  step('Finding the previous batch…');
  const previous = await previousOf(batch);
  step('Downloading the batch content…');
  const content = await source.bytes(`/batches/${enc(batch.id)}/content`);
  if (content === null) {
    return {
      ok: false,
      checks: [
        { label: 'The content is served', state: 'failed', detail: 'content: no content served' },
      ],
    };
  }
  const byObject = objectsOf(content);
  total += Math.min(byObject.size, MAX_OBJECTS);
  const objects = await replayObjects(source, network.network, byObject, step);
  step('Checking the batch content…');
  const checks: CheckResult[] = [
    ...batchChecks(
      await verifyBatch(batch, content, {
        batchPublicKey: network.batch_public_key,
        previous,
        integrityByAction: objects.integrityByAction,
      }),
    ),
    ...objects.checks,
  ];
  for (const action of actions) {
    step(`Checking the inclusion proof of ${action.id}…`);
    const label = `Action ${action.id} (${action.private ? 'private' : action.name}) is in actions_hash`;
    const proof = await source.json<ProofRecord>(
      `/batches/${enc(batch.id)}/proofs/${enc(action.id)}`,
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
  return { ok: checks.every((c) => c.state === 'passed' || c.state === 'skipped'), checks };
}
