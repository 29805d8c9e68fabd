import { TILE_WIDTH } from './tree.js';

/** A tile a request names (C2SP tlog-tiles): a hash tile at `level`, or an entry bundle. */
export interface TileRef {
  /** 'entries' for an entry bundle, else the tile level (0 = leaf hashes). */
  level: number | 'entries';
  index: number;
  /** 256 for a full tile, 1–255 for a partial one. */
  width: number;
}

/** The highest tile level served: 8 × 6 = 48 tree levels, far past 2⁵³ leaves' needs. */
const MAX_LEVEL = 6;

/** `N` as tlog-tiles writes it: 3-digit groups, all but the last prefixed with `x`. */
export function formatIndex(n: number): string {
  const groups: string[] = [];
  let rest = n;
  do {
    groups.unshift(String(rest % 1000).padStart(3, '0'));
    rest = Math.floor(rest / 1000);
  } while (rest > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

export function tilePath(t: TileRef): string {
  const base = `tile/${t.level}/${formatIndex(t.index)}`;
  return t.width === TILE_WIDTH ? base : `${base}.p/${t.width}`;
}

/**
 * Parses what follows `tile/`: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`; null when it is
 * not a tile path (then the route answers 404).
 */
export function parseTilePath(path: string): TileRef | null {
  const m = /^(entries|[0-9])\/((?:x[0-9]{3}\/)*)([0-9]{3})(?:\.p\/([0-9]{1,3}))?$/.exec(path);
  if (!m) return null;
  const [, levelText, xs, last, widthText] = m as unknown as [
    string,
    string,
    string,
    string,
    string?,
  ];
  const level = levelText === 'entries' ? 'entries' : Number(levelText);
  if (level !== 'entries' && level > MAX_LEVEL) return null;
  const groups = [
    ...xs
      .split('/')
      .filter(Boolean)
      .map((g) => g.slice(1)),
    last,
  ];
  if (groups.length > 5) return null;
  // No leading zero group: one index has one path.
  if (groups.length > 1 && groups[0] === '000') return null;
  const index = groups.reduce((acc, g) => acc * 1000 + Number(g), 0);
  let width = TILE_WIDTH;
  if (widthText !== undefined) {
    width = Number(widthText);
    if (!/^[1-9][0-9]*$/.test(widthText) || width >= TILE_WIDTH) return null;
  }
  return { level, index, width };
}
