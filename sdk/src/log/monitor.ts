import { createHmac } from 'node:crypto';
import { equalBytes, hashBytes } from '../verify/bytes.js';
import { fromBase64, toBase64 } from './base64.js';
import { verifyCheckpoint, type Checkpoint } from './checkpoint.js';
import { batchRanges, Fault, rootFault, type Io, type MonitorFault } from './monitor-batches.js';
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

export type { MonitorFault } from './monitor-batches.js';

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
  const ranges = await batchRanges(io, state?.batch ?? null, cp, oldSize);
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
