import { GENESIS, headerHash } from '../verify/batches.js';
import { hex } from '../verify/bytes.js';
import type { BatchRecord } from '../verify/types.js';
import type { Checkpoint } from './checkpoint.js';
import { frontierRoot, type Frontier } from './tree.js';

/**
 * The monitor's faults and its checks of the batch list (./monitor.ts runs them): which new
 * batches the log lists, where each sits in the log, and that they chain to what it saw.
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

/** A fault a pass found (anything else thrown is an error, or `withheld` once signed). */
export class Fault extends Error {
  constructor(
    readonly fault: MonitorFault,
    message: string,
  ) {
    super(message);
  }
}

/** The pass's GETs on the log's service. */
export interface Io {
  get(path: string, okMissing?: boolean): Promise<Response | null>;
  json<T>(path: string): Promise<T>;
}

export type Batch = BatchRecord & { log_tree_size?: number | null };

export interface Range {
  batch: Batch;
  start: number;
  end: number;
}

export const rootFault = (r: Range, own: Frontier): Fault | null =>
  hex(frontierRoot(own)) === r.batch.actions_hash
    ? null
    : new Fault(
        'batch',
        `batch ${r.batch.sequence}: actions_hash is not the root of its entries ${r.start}…${r.end - 1}`,
      );

/** How many batches the monitor asks for a page (the service serves up to 100). */
const BATCH_PAGE = 100;

/**
 * The batches sealed since `after`, oldest first (newest-first pages, stopping early). A
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
 * to its `hash`, is numbered one after the batch before (the first one after `seen`), chains
 * by `prev_hash`, covers the entries right after the one before (as many as its
 * `actions_count`), and the last is the batch the checkpoint names, ending at its size.
 * `seen` is the batch the last checkpoint seen named (null on a first pass).
 */
export async function batchRanges(
  io: Io,
  seen: { sequence: number; hash: string } | null,
  cp: Checkpoint,
  oldSize: number,
): Promise<Range[]> {
  if (!cp.batch) {
    if (cp.size > oldSize)
      throw new Fault('batch', 'the checkpoint names no batch (ons-batch line)');
    return [];
  }
  const after = seen?.sequence ?? 0;
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
  let prevHash = seen?.hash ?? null;
  let prevSequence = after;
  for (const b of batches) {
    const item = `batch ${b.sequence}`;
    if (headerHash(b) !== b.hash) throw new Fault('batch', `${item}: hash is not its header's`);
    // From an empty log, the first batch listed is batch 1, and it chains to the genesis hash
    // (0x + 64 zeros): a made-up "first" batch n would chain to anything.
    if (oldSize === 0 && out.length === 0 && b.sequence !== 1) {
      throw new Fault('batch', `${item} is listed as the log's first batch, not batch 1`);
    }
    // Batch numbers go up by one: the sealer numbers each batch after the last, and a header
    // chains to batch sequence − 1 (docs/batches.md, "Genesis"; docs/log.md, "Verifying with
    // the SDK"). A list that skips, repeats or goes back a number is not the chain the log
    // sealed, however its prev_hash links hold.
    if (b.sequence !== prevSequence + 1) {
      throw new Fault(
        'batch',
        `${item} is listed after batch ${prevSequence}: batch numbers go up by one`,
      );
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
    prevSequence = b.sequence;
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
