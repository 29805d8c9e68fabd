import { verifyActionSignature } from './actions.js';
import { verifyBatch, versionFloorAfter } from './batches.js';
import { verifyActionInclusion } from './inclusion.js';
import { verifyObjectChain } from './objects.js';
import {
  contentActionsOf,
  contentIdsOf,
  listAll,
  listSome,
  publicActionContext,
  publicTemplates,
  signedFormOf,
} from './public-reads.js';
import { checkPins, type NetworkAnswer, type NetworkPins } from './pins.js';
import type { Source } from './source.js';
import {
  fail,
  type ActionRecord,
  type BatchRecord,
  type ProofRecord,
  type PublicObject,
  type Verdict,
} from './types.js';

/**
 * `network`, `batchPublicKey`, `logKey` ({@link NetworkPins}): what the verifier knows out of
 * band. A pin the service's answer breaks is one failed verdict, `network`, and nothing else
 * is checked (not on another network's id or key).
 */
export interface VerifyOptions extends NetworkPins {
  /** Only these public objects (default: every public object, up to `maxObjects`). */
  objects?: string[];
  /**
   * At most this many public objects when none are named (the first in the public list).
   * Default 1000. When the list has more, the report says so: a verdict
   * `public objects after the first N` with `ok` and `skipped: ['maxObjects']`.
   */
  maxObjects?: number;
  /** Called as items are checked (a progress bar). */
  onProgress?: (done: number, total: number) => void;
  /**
   * Also check the signature of every action of each batch of content version 2 or later
   * that no public history showed: that content carries what rebuilds each public action's
   * text (an action on a private object has none there). Default true.
   */
  contentActions?: boolean;
  /**
   * Origins a passkey assertion may name besides the network's (`GET /public/network` →
   * `webauthn.origins`, the service's `WEBAUTHN_ORIGINS` now): those it accepted before its
   * operator changed them. Without any, published or given, the origin is not checked.
   */
  origins?: string[];
  /** RP ids a passkey assertion may name besides the network's `webauthn.rp_id`. */
  rpIds?: string[];
}

export interface VerifyReport {
  ok: boolean;
  verdicts: Verdict[];
}

const enc = encodeURIComponent;

/**
 * Re-checks the network's public history from `source`: (a) the signature of every action of
 * the public objects, and of every other action of batches of content version 2
 * (`contentActions`), (b) each public object's integrity chain, (d) each public object's
 * actions' inclusion proof in its sealed batch, and (c) every sealed batch (content, roots,
 * chain, attestation). An action whose signed text (its `hash`) or whose wallet's nonce an
 * action of another id showed before in the run fails (`replayed`, `nonce`): the service
 * applies each once. A passkey assertion must name the RP id and an origin the network
 * publishes (or `rpIds`, `origins`). With pins (`network`, `batchPublicKey`, `logKey`), the
 * first verdict, `network`, is on them. One verdict per item; `ok` when none failed. When the
 * public list had more objects than `maxObjects`, a verdict says so (`public objects after
 * the first N`, `skipped: ['maxObjects']`): the rest were not checked.
 */
export async function verifyNetwork(
  source: Source,
  opts: VerifyOptions = {},
): Promise<VerifyReport> {
  const network = await source.json<NetworkAnswer>('/public/network');
  if (network === null) throw new Error('GET /public/network: 404');
  const pinned = await checkPins(source, network, opts);
  if (pinned && !pinned.verdict.ok) return { ok: false, verdicts: [pinned.verdict] };
  const listed = await listAll<BatchRecord>(source, '/batches?order=asc&limit=100', 'batches');
  const batches = listed.filter((b) => b.hash !== '').sort((a, b) => a.sequence - b.sequence);
  const bound = pinned?.bind(batches);
  if (bound && !bound.ok) return { ok: false, verdicts: [bound] };
  const byId = new Map(batches.map((b) => [b.id, b]));
  /** The batches listed still building (no header yet). */
  const building = new Set(listed.filter((b) => b.hash === '').map((b) => b.id));
  const lastSealed = batches.at(-1);
  const objects: PublicObject[] = [];
  /** The public objects past `maxObjects` were not checked: the report says so. */
  let cut: Verdict | null = null;
  if (opts.objects) {
    for (const id of opts.objects) {
      const page = await source.json<{ objects: PublicObject[] }>(
        `/public/objects?id=${enc(id)}&include_dropped=true`,
      );
      const o = page?.objects[0];
      if (o) objects.push(o);
      else throw new Error(`object ${id} is not a public object`);
    }
  } else {
    const max = opts.maxObjects ?? 1000;
    const path = '/public/objects?order=asc&limit=100&include_dropped=true';
    const listed = await listSome<PublicObject>(source, path, 'objects', max);
    objects.push(...listed.items);
    if (listed.more) {
      cut = { item: `public objects after the first ${max}`, ok: true, skipped: ['maxObjects'] };
    }
  }

  const verdicts: Verdict[] = [...(bound ? [bound] : []), ...(cut ? [cut] : [])];
  const total = objects.length + batches.length;
  let done = 0;
  const step = () => opts.onProgress?.(++done, total);
  const actionContext = publicActionContext(source, network.network, {
    webauthn: network.webauthn ?? null,
    ...(opts.origins ? { origins: opts.origins } : {}),
    ...(opts.rpIds ? { rpIds: opts.rpIds } : {}),
  });
  const templates = publicTemplates(source);
  /** The actions whose signature is checked already: their signed form ({@link signedFormOf}). */
  const checked = new Map<string, string>();
  /** The batch whose content holds each action. */
  const contentBatchOf = new Map<string, string>();
  const integrityByAction = new Map<string, string>();
  /** The public histories read: each batch's content must hold exactly their actions in it. */
  const histories = new Map<string, ActionRecord[]>();
  /** Salts served with the proofs of actions sealed private whose objects are public now. */
  const openings = new Map<string, string>();
  /** The action that first showed each signed text (its hash) and each (wallet, nonce). */
  const byHash = new Map<string, string>();
  const byNonce = new Map<string, string>();
  /** The service applies a signed action once, and a wallet's nonce once (docs/ebus.md). */
  const unique = (action: ActionRecord): Verdict | null => {
    const nonce = `${action.wallet.toLowerCase()} ${String(action.nonce)}`;
    const sameHash = byHash.get(action.hash);
    const sameNonce = byNonce.get(nonce);
    if (sameHash === undefined) byHash.set(action.hash, action.id);
    if (sameNonce === undefined) byNonce.set(nonce, action.id);
    if (sameHash !== undefined && sameHash !== action.id) {
      return fail(
        `action ${action.id}`,
        'replayed',
        `action ${sameHash} applied the same signed text`,
      );
    }
    if (sameNonce !== undefined && sameNonce !== action.id) {
      return fail(
        `action ${action.id}`,
        'nonce',
        `nonce ${String(action.nonce)} of ${action.wallet.toLowerCase()} is action ${sameNonce}'s too`,
      );
    }
    return null;
  };

  for (const object of objects) {
    const history = await listAll<ActionRecord>(
      source,
      `/public/objects/${enc(object.id)}/history?order=asc&limit=100`,
      'action_logs',
    );
    histories.set(object.id, history);
    for (const action of history) {
      checked.set(action.id, signedFormOf(action));
      verdicts.push(unique(action) ?? (await verifyActionSignature(action, actionContext)));
    }
    const templateOf = await templates.forHistory(object.template_id, history);
    if (templateOf) {
      const chain = verifyObjectChain(object, history, templateOf);
      verdicts.push(chain.verdict);
      for (const [k, v] of chain.integrityByAction) integrityByAction.set(k, v);
    } else {
      verdicts.push({
        item: `object ${object.id}`,
        ok: false,
        failed: 'template',
        reason: 'its template is not public',
      });
    }
    for (const action of history) {
      const batch = action.batch_id === null ? undefined : byId.get(action.batch_id);
      if (!batch) {
        const unsealed = await unsealedVerdict(source, action, building, lastSealed);
        if (unsealed) verdicts.push(unsealed);
        continue;
      }
      const proof = await source.json<ProofRecord>(
        `/batches/${enc(batch.id)}/proofs/${enc(action.id)}`,
      );
      verdicts.push(
        proof === null
          ? {
              item: `proof ${action.id} in ${batch.id}`,
              ok: false,
              failed: 'proof',
              reason: 'no proof served',
            }
          : verifyActionInclusion(action, proof, batch, integrityByAction.get(action.id)),
      );
      if (proof?.salt !== undefined) openings.set(action.id, proof.salt);
    }
    step();
  }

  let previous: BatchRecord | null = null;
  let versionFloor = 1;
  for (const batch of batches) {
    const content = await source.bytes(`/batches/${enc(batch.id)}/content`);
    verdicts.push(
      content === null
        ? {
            item: `batch ${batch.sequence} ${batch.id}`,
            ok: false,
            failed: 'content',
            reason: 'no content served',
          }
        : await verifyBatch(batch, content, {
            batchPublicKey: network.batch_public_key,
            previous,
            integrityByAction,
            histories,
            openings,
            versionFloor,
          }),
    );
    versionFloor = versionFloorAfter(versionFloor, batch.version);
    // One action is in one batch: a second copy elsewhere is a record no proof is about.
    for (const id of content === null ? [] : contentIdsOf(content)) {
      const other = contentBatchOf.get(id);
      if (other !== undefined) {
        verdicts.push({
          item: `action ${id}`,
          ok: false,
          failed: 'batch_id',
          reason:
            other === batch.id
              ? `the content of ${batch.id} holds it twice`
              : `the content of ${other} and of ${batch.id} both hold it`,
        });
      } else contentBatchOf.set(id, batch.id);
    }
    if (content !== null && batch.version >= 2 && opts.contentActions !== false) {
      for (const action of contentActionsOf(content)) {
        // Skipped only when it is the very record whose signature was checked.
        const form = signedFormOf(action);
        if (checked.get(action.id) === form) continue;
        checked.set(action.id, form);
        verdicts.push(unique(action) ?? (await verifyActionSignature(action, actionContext)));
      }
    }
    previous = batch;
    step();
  }
  return { ok: verdicts.every((v) => v.ok), verdicts };
}

/**
 * The verdict on a history action that names no listed sealed batch: failed when its batch
 * is not served, or is sealed though the list (read before the histories) showed it neither
 * sealed nor building, nor sealed after it; `skipped` (`proof`) when it is not in a sealed
 * batch yet although it is older than the last sealed batch; none when it is newer (it waits
 * for the next batch).
 */
async function unsealedVerdict(
  source: Source,
  action: ActionRecord,
  building: ReadonlySet<string>,
  lastSealed: BatchRecord | undefined,
): Promise<Verdict | null> {
  const item = `proof ${action.id} in ${action.batch_id ?? 'no batch'}`;
  if (action.batch_id !== null && !building.has(action.batch_id)) {
    const batch = await source.json<BatchRecord>(`/batches/${enc(action.batch_id)}`);
    if (batch === null) {
      return { item, ok: false, failed: 'batch_id', reason: 'its batch is not served' };
    }
    const sealedBefore = batch.hash !== '' && batch.sequence <= (lastSealed?.sequence ?? 0);
    if (batch.id !== action.batch_id || sealedBefore) {
      return {
        item,
        ok: false,
        failed: 'batch_id',
        reason: 'its batch is sealed but not in the list of sealed batches',
      };
    }
    if (batch.hash !== '') return { item, ok: true, skipped: ['proof'] }; // sealed since
  }
  const older = lastSealed !== undefined && action.when_created < lastSealed.when_created;
  return older ? { item, ok: true, skipped: ['proof'] } : null;
}
