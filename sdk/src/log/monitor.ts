import { createHmac } from 'node:crypto';
import { GENESIS, headerHash } from '../verify/batches.js';
import { equalBytes, hashBytes, hex } from '../verify/bytes.js';
import type { BatchRecord } from '../verify/types.js';
import { fromBase64, toBase64 } from './base64.js';
import { verifyCheckpoint, type Checkpoint } from './checkpoint.js';
import { parseNote } from './note.js';
import { readState, writeState } from './state-file.js';
import { entriesPath, entryTilesFor, parseEntryBundle } from './tiles.js';
import {
  appendLeaf,
  emptyFrontier,
  frontierRoot,
  leafHash,
  verifyConsistencyProof,
  type Frontier,
} from './tree.js';

/**
 * `ons-verify monitor` (node-only): one pass over a log, run from cron or a loop. It fetches
 * the latest checkpoint, checks its signature and cosignatures, proves it consistent with the
 * last checkpoint it saw, fetches the new entries (entry tiles), checks they hash to the
 * signed root, and checks each new batch's `actions_hash` is the root of its range of those
 * entries and its header hash is what the checkpoint's `ons-batch` line names. The state file
 * keeps the last checkpoint and the tree's right edge, so each pass reads only what is new.
 */

/** What went wrong, named. */
export type MonitorFault =
  | 'rollback' // the tree got smaller than one it saw
  | 'fork' // same size, another root or text; or a new tree that does not extend the old (split view)
  | 'signature' // the checkpoint is not signed by the log's key (or the key changed)
  | 'cosignature' // a witness's cosignature is bad, or too few witnesses cosigned
  | 'entries' // the entry tiles do not hash to the signed root
  | 'batch' // a batch does not match the log
  | 'withheld' // the checkpoint is signed, but what it commits to is not served (tiles, proofs, batches)
  | 'stale'; // too few cosignatures within maxAgeSeconds: a frozen log, or an old view

/** How long one request of a pass may take (a log that hangs is a log that withholds). */
export const MONITOR_REQUEST_TIMEOUT_MS = 30_000;

export interface MonitorOptions {
  /** The service's public base URL. */
  url: string;
  statePath: string;
  /** The log's verifier key; default: pinned in the state file, else `/public/network`'s. */
  logKey?: string;
  /** Witness cosignature keys; default: pinned in the state, else `/public/network`'s. */
  witnessKeys?: string[];
  /** Cosignatures required from those witnesses (default 0). */
  minCosignatures?: number;
  /** Only cosignatures this recent count towards `minCosignatures` (verifyCheckpoint). */
  maxAgeSeconds?: number;
  /** Where to POST a signed alert on a fault (with `webhookKey`). */
  webhookUrl?: string;
  /** 64 hex: the alert is signed as the service signs webhooks (`verifyWebhook` checks it). */
  webhookKey?: string;
  fetch?: typeof fetch;
}

export interface MonitorResult {
  ok: boolean;
  fault?: MonitorFault;
  message: string;
  size: number;
  previousSize: number;
}

interface MonitorState {
  version: 1;
  url: string;
  log_key: string;
  witness_keys: string[];
  checkpoint: string;
  size: number;
  root: string;
  frontier: { height: number; hash: string }[];
  batch: { sequence: number; hash: string } | null;
}

type Batch = BatchRecord & { log_tree_size?: number | null };

class Fault extends Error {
  constructor(
    readonly fault: MonitorFault,
    message: string,
  ) {
    super(message);
  }
}

export async function runMonitor(opts: MonitorOptions): Promise<MonitorResult> {
  const f = opts.fetch ?? globalThis.fetch;
  const base = opts.url.replace(/\/+$/, '');
  const get = async (path: string, okMissing = false): Promise<Response | null> => {
    const res = await f(`${base}${path}`, {
      signal: AbortSignal.timeout(MONITOR_REQUEST_TIMEOUT_MS),
    });
    if (okMissing && res.status === 404) return null;
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return res;
  };
  const json = async <T>(path: string): Promise<T> => (await (await get(path))!.json()) as T;

  const state = await readState<MonitorState>(opts.statePath);
  const previousSize = state?.size ?? 0;
  let result: MonitorResult;
  let checkpointText = '';
  try {
    const network = await json<{
      log?: { verifier_key: string; witnesses?: { verifier_key: string }[] };
    }>('/public/network');
    const served = network.log?.verifier_key;
    const logKey = opts.logKey ?? state?.log_key ?? served;
    if (!logKey) throw new Error('/public/network names no log key and none was given');
    if (state && served !== undefined && served !== state.log_key && !opts.logKey) {
      throw new Fault('signature', `the log's key changed from ${state.log_key} to ${served}`);
    }
    const witnessKeys =
      opts.witnessKeys ??
      state?.witness_keys ??
      (network.log?.witnesses ?? []).map((w) => w.verifier_key);
    checkpointText = await (await get('/log/checkpoint'))!.text();
    const checked = await verifyCheckpoint(checkpointText, {
      logKey,
      witnessKeys,
      minCosignatures: opts.minCosignatures ?? 0,
      ...(opts.maxAgeSeconds !== undefined ? { maxAgeSeconds: opts.maxAgeSeconds } : {}),
    });
    if (!checked.ok || !checked.checkpoint) {
      const fault = checked.errors.every((e) => e.startsWith('stale'))
        ? 'stale'
        : checked.errors.every((e) => e.startsWith('cosignature'))
          ? 'cosignature'
          : 'signature';
      const words = checked.errors.map((e) => e.replace(new RegExp(`^${fault}: `), ''));
      throw new Fault(fault, words.join('; '));
    }
    const cp = checked.checkpoint;
    // The log signed this size: whatever it then fails to serve is withheld, not an outage.
    const next = await advance(state, cp, { get, json }).catch((err: unknown) => {
      if (err instanceof Fault) throw err;
      throw new Fault('withheld', `size ${cp.size} is signed, but ${(err as Error).message}`);
    });
    await writeState(opts.statePath, {
      version: 1,
      url: base,
      log_key: logKey,
      witness_keys: witnessKeys,
      checkpoint: checkpointText,
      size: cp.size,
      root: toBase64(cp.root),
      frontier: next.frontier.nodes.map((n) => ({ height: n.height, hash: toBase64(n.hash) })),
      batch: cp.batch ?? state?.batch ?? null,
    } satisfies MonitorState);
    const witnesses = checked.cosignatures.map((c) => c.name).join(', ') || 'no witness';
    result = {
      ok: true,
      size: cp.size,
      previousSize,
      message:
        `size ${cp.size} (was ${previousSize}): ${cp.size - previousSize} new entries and ` +
        `${next.batches} batches checked; cosigned by ${witnesses}`,
    };
  } catch (err) {
    if (!(err instanceof Fault)) throw err;
    result = {
      ok: false,
      fault: err.fault,
      message: err.message,
      size: previousSize,
      previousSize,
    };
    await alert(opts, result, checkpointText, f);
  }
  return result;
}

interface Io {
  get(path: string, okMissing?: boolean): Promise<Response | null>;
  json<T>(path: string): Promise<T>;
}

/**
 * Checks cp against the state; returns the new right edge. Throws Fault. Entries are read a
 * tile at a time and folded into the tree's right edge and into the current batch's own
 * range, so memory stays O(log n + batches) even on a first pass over a large log.
 */
async function advance(
  state: MonitorState | null,
  cp: Checkpoint,
  io: Io,
): Promise<{ frontier: Frontier; batches: number }> {
  const oldSize = state?.size ?? 0;
  const oldRoot = state ? fromBase64(state.root)! : null;
  const frontier: Frontier = {
    size: oldSize,
    nodes: (state?.frontier ?? []).map((n) => ({ height: n.height, hash: fromBase64(n.hash)! })),
  };
  if (cp.size < oldSize) {
    throw new Fault('rollback', `the log went back from size ${oldSize} to ${cp.size}`);
  }
  if (oldRoot && cp.size === oldSize) {
    if (!equalBytes(oldRoot, cp.root)) {
      throw new Fault(
        'fork',
        `two checkpoints of size ${oldSize} with different roots (a split view)`,
      );
    }
    // Every sealed batch holds an action, so the log signs one checkpoint per size: the
    // same size with another body (another ons-batch line) is a rewritten batch header.
    const saved = savedBody(state!);
    const same =
      saved !== null
        ? cp.body === saved
        : cp.batch?.sequence === state!.batch?.sequence && cp.batch?.hash === state!.batch?.hash;
    if (!same) {
      throw new Fault(
        'fork',
        `two checkpoints of size ${oldSize} with the same root but different extension ` +
          'lines (a rewritten ons-batch line: the log signed two headers for one size)',
      );
    }
    return { frontier, batches: 0 };
  }
  if (oldRoot && oldSize > 0) {
    const p = await io.json<{ from: number; to: number; proof: string[] }>(
      `/log/proof/consistency?from=${oldSize}&to=${cp.size}`,
    );
    const proof = Array.isArray(p.proof) ? p.proof.map(hashBytes) : [null];
    if (
      p.from !== oldSize ||
      p.to !== cp.size ||
      proof.some((x) => x === null) ||
      !verifyConsistencyProof(oldSize, cp.size, proof as Uint8Array[], oldRoot, cp.root)
    ) {
      throw new Fault(
        'fork',
        `size ${cp.size} is not consistent with the checkpoint of size ${oldSize} seen before ` +
          '(a fork or rewritten history)',
      );
    }
  }
  const ranges = await batchRanges(io, state, cp, oldSize);
  // Each batch's own tree, fed as its entries stream by; its first mismatch is reported
  // after the whole range is known to be the log's (a lying tile is `entries`, not `batch`).
  const found: { fault: Fault | null } = { fault: null };
  let bi = 0;
  let own = emptyFrontier();
  const closeEmpty = () => {
    while (bi < ranges.length && ranges[bi]!.start === ranges[bi]!.end) {
      found.fault ??= rootFault(ranges[bi]!, emptyFrontier());
      bi++;
    }
  };
  closeEmpty();
  await forEachEntry(io, oldSize, cp.size, (entry, i) => {
    const leaf = leafHash(entry);
    appendLeaf(frontier, leaf);
    const r = ranges[bi];
    if (!r) return;
    appendLeaf(own, leaf);
    if (i + 1 === r.end) {
      found.fault ??= rootFault(r, own);
      own = emptyFrontier();
      bi++;
      closeEmpty();
    }
  });
  if (!equalBytes(frontierRoot(frontier), cp.root)) {
    throw new Fault('entries', `entries ${oldSize}…${cp.size - 1} do not hash to the signed root`);
  }
  if (found.fault) throw found.fault;
  return { frontier, batches: ranges.length };
}

/** The note text of the checkpoint the state keeps (null when it cannot be read: then only
 * its `batch` is compared). */
function savedBody(state: MonitorState): string | null {
  try {
    return parseNote(state.checkpoint).body;
  } catch {
    return null;
  }
}

interface Range {
  batch: Batch;
  start: number;
  end: number;
}

const rootFault = (r: Range, own: Frontier): Fault | null =>
  hex(frontierRoot(own)) === r.batch.actions_hash
    ? null
    : new Fault(
        'batch',
        `batch ${r.batch.sequence}: actions_hash is not the root of its entries ${r.start}…${r.end - 1}`,
      );

/** Calls `each` on entries [from, to) in order, fetched one entry tile at a time. */
async function forEachEntry(
  io: Io,
  from: number,
  to: number,
  each: (entry: Uint8Array, index: number) => void,
): Promise<void> {
  for (const t of entryTilesFor(from, to, to)) {
    let res = await io.get(`/log/${entriesPath(t.index, t.width)}`, true);
    // A partial tile may have been completed since the checkpoint: the full one holds it.
    if (res === null && t.width < 256) res = await io.get(`/log/${entriesPath(t.index)}`, true);
    if (res === null) throw new Error(`entry tile ${t.index} is missing`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    let items: Uint8Array[];
    try {
      items = parseEntryBundle(bytes);
    } catch (err) {
      throw new Fault('entries', `entry tile ${t.index}: ${(err as Error).message}`);
    }
    if (items.length < t.width || items.some((e) => e.length !== 32)) {
      throw new Fault('entries', `entry tile ${t.index} does not hold ${t.width} 32-byte hashes`);
    }
    const start = t.index * 256;
    for (let i = Math.max(from, start); i < Math.min(to, start + t.width); i++) {
      each(items[i - start]!, i);
    }
  }
}

/** How many batches the monitor asks for a page (the service serves up to 100). */
const BATCH_PAGE = 100;

/**
 * The batches sealed since the state's, oldest first (newest-first pages, stopping early). A
 * list that does not move on is withheld: an empty page that says there is more, a `next`
 * cursor it was given before, or more pages than the batches after `after` up to `upTo` fill
 * at the server's page size (its first page's), plus one for batches sealed since the
 * checkpoint. A server could otherwise keep the monitor paging forever.
 */
async function newBatches(io: Io, after: number, upTo: number): Promise<Batch[]> {
  const out: Batch[] = [];
  const cursors = new Set<string>();
  let next: string | null = null;
  let pageSize = 0;
  for (let pages = 1; ; pages++) {
    const q: string = next === null ? '' : `&next=${encodeURIComponent(next)}`;
    const page = await io.json<{ batches: Batch[]; has_more: boolean; next: string }>(
      `/batches?order=desc&limit=${BATCH_PAGE}${q}`,
    );
    const list = Array.isArray(page.batches) ? page.batches : [];
    let done = false;
    for (const b of list) {
      if (b.sequence <= after) {
        done = true;
        break;
      }
      if (b.sequence <= upTo && typeof b.log_tree_size === 'number') out.push(b);
    }
    if (done || !page.has_more) break;
    // Not a Fault: runMonitor names it `withheld` (the checkpoint's size is signed).
    const stuck = (why: string) => new Error(`the batch list ${why}`);
    if (list.length === 0) throw stuck(`page ${pages} is empty but says there is more`);
    pageSize ||= list.length;
    if (typeof page.next !== 'string' || cursors.has(page.next)) {
      throw stuck(
        `page ${pages} gives a next cursor it gave before (${JSON.stringify(page.next)})`,
      );
    }
    cursors.add(page.next);
    const most = Math.ceil(Math.max(upTo - after, 0) / pageSize) + 1;
    if (pages >= most) {
      throw stuck(
        `goes on past ${pages} pages of ${pageSize} for the ${upTo - after} batches after batch ${after}`,
      );
    }
    next = page.next;
  }
  return out.reverse();
}

/**
 * The new batches' places in the log, checked before any entry is read: each header hashes
 * to its `hash`, chains by `prev_hash`, covers the entries right after the one before (as
 * many as its `actions_count`), and the last is the batch the checkpoint names, ending at
 * its size.
 */
async function batchRanges(
  io: Io,
  state: MonitorState | null,
  cp: Checkpoint,
  oldSize: number,
): Promise<Range[]> {
  if (!cp.batch) {
    if (cp.size > oldSize)
      throw new Fault('batch', 'the checkpoint names no batch (ons-batch line)');
    return [];
  }
  const after = state?.batch?.sequence ?? 0;
  // Every batch holds at least one action: a checkpoint naming a batch further on than the
  // new entries allow is not the log's (and would have the monitor page towards it forever).
  if (cp.batch.sequence - after > cp.size - oldSize) {
    throw new Fault(
      'batch',
      `batch ${cp.batch.sequence}, named by the checkpoint, is ${cp.batch.sequence - after} ` +
        `batches after batch ${after}, but only ${cp.size - oldSize} entries were added`,
    );
  }
  const batches = await newBatches(io, after, cp.batch.sequence);
  const out: Range[] = [];
  let size = oldSize;
  let prevHash = state?.batch?.hash ?? null;
  for (const b of batches) {
    const item = `batch ${b.sequence}`;
    if (headerHash(b) !== b.hash) throw new Fault('batch', `${item}: hash is not its header's`);
    // From an empty log, the first batch listed is batch 1, and it chains to the genesis hash
    // (0x + 64 zeros): a made-up "first" batch n would chain to anything.
    if (oldSize === 0 && out.length === 0 && b.sequence !== 1) {
      throw new Fault('batch', `${item} is listed as the log's first batch, not batch 1`);
    }
    if (b.sequence === 1) prevHash ??= GENESIS;
    if (prevHash !== null && b.prev_hash !== prevHash) {
      throw new Fault('batch', `${item}: prev_hash does not chain to the batch before`);
    }
    const end = b.log_tree_size!;
    if (end < size || end > cp.size || end - size !== b.actions_count) {
      throw new Fault('batch', `${item}: its place in the log (${size}…${end}) does not fit`);
    }
    out.push({ batch: b, start: size, end });
    size = end;
    prevHash = b.hash;
  }
  const last = batches[batches.length - 1];
  if (cp.size > oldSize && (!last || last.sequence !== cp.batch.sequence)) {
    throw new Fault('batch', `batch ${cp.batch.sequence}, named by the checkpoint, is not listed`);
  }
  if (last && (last.hash !== cp.batch.hash || size !== cp.size)) {
    throw new Fault('batch', `batch ${last.sequence} is not the one the checkpoint names`);
  }
  return out;
}

/** POSTs a fault report signed like the service's webhooks (`t=…,v1=HMAC-SHA256`). */
async function alert(
  opts: MonitorOptions,
  r: MonitorResult,
  checkpoint: string,
  f: typeof fetch,
): Promise<void> {
  if (!opts.webhookUrl || !opts.webhookKey) return;
  const body = JSON.stringify({
    type: 'log.fault',
    url: opts.url,
    fault: r.fault,
    message: r.message,
    last_good_size: r.previousSize,
    checkpoint,
  });
  const t = Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', Buffer.from(opts.webhookKey, 'hex'))
    .update(`${t}.${body}`)
    .digest('hex');
  await f(opts.webhookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': `t=${t},v1=${mac}` },
    body,
  }).catch(() => undefined);
}
