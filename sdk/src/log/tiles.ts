/**
 * C2SP tlog-tiles paths and entry bundles. A tile holds 256 hashes of one level of the tree
 * (level 0: leaf hashes); entry tile N holds entries 256·N … 256·N + 255. A tile not yet
 * full is served as a partial tile `.p/<W>` of its W first items. Indexes are written in
 * groups of three digits, all but the last prefixed `x` (1234067 → x001/x234/067).
 */

export const TILE_WIDTH = 256;

export function tileIndexPath(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError('bad tile index');
  const groups: string[] = [];
  let rest = n;
  do {
    groups.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

const partial = (width: number): string => (width === TILE_WIDTH ? '' : `.p/${String(width)}`);

/** `tile/<L>/<N>[.p/<W>]` (relative to the log's prefix, e.g. `/log/`). */
export const tilePath = (level: number, n: number, width = TILE_WIDTH): string =>
  `tile/${String(level)}/${tileIndexPath(n)}${partial(width)}`;

/** `tile/entries/<N>[.p/<W>]`. */
export const entriesPath = (n: number, width = TILE_WIDTH): string =>
  `tile/entries/${tileIndexPath(n)}${partial(width)}`;

/**
 * The entry tiles that hold entries [from, to) of a tree of `size`: index and width (the
 * last one partial when the tree ends inside it).
 */
export function entryTilesFor(
  from: number,
  to: number,
  size: number,
): { index: number; width: number }[] {
  const out: { index: number; width: number }[] = [];
  if (to <= from) return out;
  for (let n = Math.floor(from / TILE_WIDTH); n * TILE_WIDTH < to; n++) {
    out.push({ index: n, width: Math.min(TILE_WIDTH, size - n * TILE_WIDTH) });
  }
  return out;
}

/**
 * An entry bundle: each entry as a 2-byte big-endian length and its bytes. Throws when
 * the bytes do not split into exactly `expected` entries (when given).
 */
export function parseEntryBundle(bytes: Uint8Array, expected?: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) throw new Error('truncated entry bundle');
    const len = (bytes[at]! << 8) | bytes[at + 1]!;
    at += 2;
    if (at + len > bytes.length) throw new Error('truncated entry bundle');
    out.push(new Uint8Array(bytes.subarray(at, at + len)));
    at += len;
  }
  if (expected !== undefined && out.length !== expected) {
    throw new Error(`the entry bundle has ${out.length} entries, not ${expected}`);
  }
  return out;
}
