import { verifyActionSignature } from './actions.js';
import { verifyBatch } from './batches.js';
import { verifyActionInclusion } from './inclusion.js';
import { verifyObjectChain } from './objects.js';
import {
  contentActionsOf,
  contentIdsOf,
  listAll,
  publicActionContext,
  publicTemplates,
  signedFormOf,
} from './public-reads.js';
import type { Source } from './source.js';
import {
  fail,
  type ActionRecord,
  type BatchRecord,
  type ProofRecord,
  type PublicObject,
  type Verdict,
} from './types.js';

const enc = encodeURIComponent;

export interface SealedBatchOptions {
  /**
   * The batch sealed just before (sequence - 1); null for the first. Read from the service's
   * batch list when not given.
   */
  previous?: BatchRecord | null;
  /** At most this many of the batch's public objects are replayed. Default 50. */
  maxObjects?: number;
  /** Called before each step: what is being checked, how many steps are done, of how many. */
  onProgress?: (label: string, done: number, total: number) => void;
}

/** One line of a batch's verification: what kind of check, on what, and its verdict. */
export interface SealedBatchLine {
  kind: 'batch' | 'chain' | 'signature' | 'inclusion';
  /** The object (chain), or the action (signature, inclusion) checked. */
  id?: string;
  /** For a signature: `eoa` or `webauthn`. For inclusion: the action's name, or `private`. */
  detail?: string;
  verdict: Verdict;
}

export interface SealedBatchReport {
  ok: boolean;
  lines: SealedBatchLine[];
  /** Objects the batch touched whose history is not public (not replayed). */
  notPublic: number;
  /** Public objects over `maxObjects` (not replayed). */
  overLimit: number;
}

/** The batch sealed just before `batch`, from the service's newest-first list. */
async function previousOf(source: Source, batch: BatchRecord): Promise<BatchRecord | null> {
  if (batch.sequence <= 1) return null;
  const path = `/batches?order=desc&limit=100&${enc('when_created[$lte]')}=${enc(batch.when_created)}`;
  const list = await listAll<BatchRecord>(source, path, 'batches', 2000);
  const found = list.find((b) => b.sequence === batch.sequence - 1);
  if (!found) throw new Error(`the previous batch (sequence ${batch.sequence - 1}) was not found`);
  return found;
}

/**
 * The actions whose inclusion is checked: every one of the batch. An item of the service's
 * batch list carries only its first few (docs/batches.md); the batch's own record all.
 */
async function actionsOf(source: Source, batch: BatchRecord) {
  if (batch.affected_actions.length >= batch.actions_count) return batch.affected_actions;
  const full = await source.json<BatchRecord>(`/batches/${enc(batch.id)}`);
  if (full === null) throw new Error(`GET /batches/${batch.id}: 404`);
  return full.affected_actions;
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
 * Verifies one sealed batch from `source`, as `ons-verify` verifies the network, trusting
 * only the network's batch public key: (b) each public object the batch touched replayed to
 * its hashes with the template version of each action, (a) the signature of each of the
 * batch's actions that public data rebuilds (on public objects, and in content of version 2
 * or later) — an EOA signature may be the wallet's own key or an EOA linked to the wallet
 * when it signed, (c) the batch itself (content, roots, chain, attestation), and (d) each of
 * its actions' inclusion proofs. The console's "Verify in the browser" is this function.
 * `batch` may be an item of the service's batch list: its actions are then read from the
 * batch's own record.
 */
export async function verifySealedBatch(
  source: Source,
  batch: BatchRecord,
  opts: SealedBatchOptions = {},
): Promise<SealedBatchReport> {
  const maxObjects = opts.maxObjects ?? 50;
  const actions = await actionsOf(source, batch);
  let total = 4 + actions.length;
  let done = 0;
  const step = (label: string) => opts.onProgress?.(label, done++, total);
  const lines: SealedBatchLine[] = [];
  const finish = (notPublic = 0, overLimit = 0): SealedBatchReport => {
    opts.onProgress?.('Done', total, total);
    return { ok: lines.every((l) => l.verdict.ok), lines, notPublic, overLimit };
  };

  step('Reading the network’s batch public key…');
  const network = await source.json<{ network: string; batch_public_key: string }>(
    '/public/network',
  );
  if (network === null) throw new Error('GET /public/network: 404');
  step('Finding the previous batch…');
  const previous = opts.previous !== undefined ? opts.previous : await previousOf(source, batch);
  step('Downloading the batch content…');
  const content = await source.bytes(`/batches/${enc(batch.id)}/content`);
  const batchItem = `batch ${batch.sequence} ${batch.id}`;
  if (content === null) {
    lines.push({
      kind: 'batch',
      verdict: { item: batchItem, ok: false, failed: 'content', reason: 'no content served' },
    });
    return finish();
  }

  const ctx = publicActionContext(source, network.network);
  const templates = publicTemplates(source);
  const byObject = objectsOf(content);
  const replayed = [...byObject].slice(0, maxObjects);
  total += replayed.length;
  const integrityByAction = new Map<string, string>();
  /** The replayed objects' public histories: the content must hold exactly their actions. */
  const histories = new Map<string, ActionRecord[]>();
  /** The signed form ({@link signedFormOf}) of each action whose signature was checked. */
  const signed = new Map<string, string>();
  const signatureLine = async (record: ActionRecord) => {
    signed.set(record.id, signedFormOf(record));
    lines.push({
      kind: 'signature',
      id: record.id,
      detail: record.signature_type,
      verdict: await verifyActionSignature(record, ctx),
    });
  };
  let notPublic = 0;
  for (const [objectId, actionIds] of replayed) {
    step(`Replaying the history of ${objectId}…`);
    const found = await source.json<{ objects: PublicObject[] }>(
      `/public/objects?id=${enc(objectId)}&include_dropped=true`,
    );
    const object = found?.objects[0];
    if (!object) {
      notPublic++;
      continue;
    }
    const history = await listAll<ActionRecord>(
      source,
      `/public/objects/${enc(objectId)}/history?order=asc&limit=100`,
      'action_logs',
    );
    histories.set(objectId, history);
    const templateOf = await templates.forHistory(object.template_id, history);
    if (templateOf === null) {
      lines.push({
        kind: 'chain',
        id: objectId,
        verdict: {
          item: `object ${objectId}`,
          ok: false,
          failed: 'template',
          reason: 'its template is not public',
        },
      });
    } else {
      const chain = verifyObjectChain(object, history, templateOf);
      lines.push({ kind: 'chain', id: objectId, verdict: chain.verdict });
      for (const [k, v] of chain.integrityByAction) integrityByAction.set(k, v);
    }
    for (const record of history.filter((a) => actionIds.includes(a.id))) {
      await signatureLine(record);
    }
  }
  // Content of version 2 or later carries what rebuilds each public action's text.
  if (batch.version >= 2) {
    for (const record of contentActionsOf(content)) {
      // Skipped only when it is the very record whose signature was checked.
      if (signed.get(record.id) !== signedFormOf(record)) await signatureLine(record);
    }
  }
  const ids = contentIdsOf(content);
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  for (const id of new Set(twice)) {
    lines.push({
      kind: 'signature',
      id,
      verdict: fail(`action ${id}`, 'batch_id', `the content of ${batch.id} holds it twice`),
    });
  }

  // The proofs first: an action sealed private whose object is public now comes with the salt
  // that opens its commitment, which the content's history check needs.
  const proofs = new Map<string, ProofRecord | null>();
  const openings = new Map<string, string>();
  for (const action of actions) {
    step(`Reading the inclusion proof of ${action.id}…`);
    const proof = await source.json<ProofRecord>(
      `/batches/${enc(batch.id)}/proofs/${enc(action.id)}`,
    );
    proofs.set(action.id, proof);
    if (proof?.salt !== undefined) openings.set(action.id, proof.salt);
  }
  step('Checking the batch content…');
  lines.push({
    kind: 'batch',
    verdict: await verifyBatch(batch, content, {
      batchPublicKey: network.batch_public_key,
      previous,
      integrityByAction,
      histories,
      openings,
    }),
  });
  for (const action of actions) {
    const proof = proofs.get(action.id) ?? null;
    lines.push({
      kind: 'inclusion',
      id: action.id,
      detail: action.private ? 'private' : action.name,
      verdict:
        proof === null
          ? {
              item: `proof ${action.id} in ${batch.id}`,
              ok: false,
              failed: 'proof',
              reason: 'no proof served',
            }
          : verifyActionInclusion(action, action.private ? sealedForm(proof) : proof, batch),
    });
  }
  return finish(notPublic, byObject.size - replayed.length);
}

/** A proof without its salt: a private entry's `hash` is its commitment, the leaf as it is. */
function sealedForm(proof: ProofRecord): ProofRecord {
  const { salt: _, ...rest } = proof;
  return rest;
}
