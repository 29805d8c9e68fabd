/**
 * The hashing of the synthetic log's seeder (bench/log-seed.ts), in plain JavaScript on 32-bit
 * words: SHA-256 of the three fixed-size messages the tree needs. Node's `crypto` costs ~3 µs
 * per call on this machine whatever the input (binding overhead, not hashing), so 10⁷ leaves
 * (3 calls each) took ~100 s; one SHA-256 block here takes ~0.7 µs, four blocks per leaf.
 * Checked against `node:crypto` and the SDK by bench/log-seed-hash.test.ts.
 *
 * A hash is 8 big-endian words at an offset of an Int32Array.
 */

const K = Int32Array.from(
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ].map((k) => k | 0),
);
const IV = Int32Array.from(
  [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ].map((k) => k | 0),
);

/** The message schedule: W[0..15] is the block, set by the caller. */
const W = new Int32Array(64);
/** The running state of the hash being computed. */
const S = new Int32Array(8);

/** One SHA-256 compression of the block in W[0..15] into S. */
function compress(): void {
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = S[0]!;
  let b = S[1]!;
  let c = S[2]!;
  let d = S[3]!;
  let e = S[4]!;
  let f = S[5]!;
  let g = S[6]!;
  let h = S[7]!;
  for (let t = 0; t < 64; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  S[0] = (S[0]! + a) | 0;
  S[1] = (S[1]! + b) | 0;
  S[2] = (S[2]! + c) | 0;
  S[3] = (S[3]! + d) | 0;
  S[4] = (S[4]! + e) | 0;
  S[5] = (S[5]! + f) | 0;
  S[6] = (S[6]! + g) | 0;
  S[7] = (S[7]! + h) | 0;
}

/** Zeroes W[from..14] and puts the message length (bits) in W[15]. */
function pad(from: number, bits: number): void {
  for (let t = from; t < 15; t++) W[t] = 0;
  W[15] = bits;
}

/**
 * Synthetic leaf i's data, SHA-256 of i as 8 big-endian bytes (test/helpers/synthetic-log.ts's
 * `syntheticLeaf`, PostgreSQL's `sha256(int8send(i))`), into out[at..at+8).
 */
export function leafDataWords(i: number, out: Int32Array, at: number): void {
  S.set(IV);
  W[0] = Math.floor(i / 0x1_0000_0000) | 0;
  W[1] = i | 0;
  W[2] = 0x80000000 | 0;
  pad(3, 64);
  compress();
  out.set(S, at);
}

/** RFC 6962 leaf hash H(0x00 ‖ data) of the 32 bytes at src[from..from+8), into out[at..]. */
export function leafHashWords(src: Int32Array, from: number, out: Int32Array, at: number): void {
  S.set(IV);
  W[0] = src[from]! >>> 8;
  for (let k = 1; k < 8; k++) W[k] = (src[from + k - 1]! << 24) | (src[from + k]! >>> 8);
  W[8] = (src[from + 7]! << 24) | 0x00800000;
  pad(9, 264);
  compress();
  out.set(S, at);
}

/**
 * RFC 6962 node hash H(0x01 ‖ left ‖ right) of src[l..l+8) and src[r..r+8), into out[at..]
 * (which may be where left or right is).
 */
export function nodeHashWords(
  src: Int32Array,
  l: number,
  r: number,
  out: Int32Array,
  at: number,
): void {
  S.set(IV);
  W[0] = 0x01000000 | (src[l]! >>> 8);
  for (let k = 1; k < 8; k++) W[k] = (src[l + k - 1]! << 24) | (src[l + k]! >>> 8);
  W[8] = (src[l + 7]! << 24) | (src[r]! >>> 8);
  for (let k = 1; k < 8; k++) W[8 + k] = (src[r + k - 1]! << 24) | (src[r + k]! >>> 8);
  const last = src[r + 7]!;
  compress();
  W[0] = (last << 24) | 0x00800000;
  pad(1, 520);
  compress();
  out.set(S, at);
}

/** The 32 bytes of the hash at words[at..at+8). */
export function bytesOfWords(words: Int32Array, at: number): Buffer {
  const b = Buffer.allocUnsafe(32);
  for (let k = 0; k < 8; k++) b.writeInt32BE(words[at + k]!, 4 * k);
  return b;
}

/** Hashes as 8-word runs (for the few built outside the tight loop). */
export function wordsOfBytes(b: Uint8Array): Int32Array {
  const w = new Int32Array(8);
  const view = new DataView(b.buffer, b.byteOffset, 32);
  for (let k = 0; k < 8; k++) w[k] = view.getInt32(4 * k);
  return w;
}

/** H(0x01 ‖ left ‖ right) of two 8-word hashes, as a new 8-word hash. */
export function node(left: Int32Array, right: Int32Array): Int32Array {
  const both = new Int32Array(16);
  both.set(left, 0);
  both.set(right, 8);
  const out = new Int32Array(8);
  nodeHashWords(both, 0, 8, out, 0);
  return out;
}

/**
 * The RFC 6962 root of the `count` (≥ 1) leaf hashes at words[at..], 8 words each: split at
 * the largest power of two below the count.
 */
export function rootOfRun(words: Int32Array, at: number, count: number): Int32Array {
  if (count === 1) return words.slice(at, at + 8);
  let k = 1;
  while (k * 2 < count) k *= 2;
  return node(rootOfRun(words, at, k), rootOfRun(words, at + 8 * k, count - k));
}

/** Folds full subtrees' hashes (left to right, largest first) into the root of their range. */
export function foldRight(hashes: readonly Int32Array[]): Int32Array {
  let h = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) h = node(hashes[i]!, h);
  return h;
}

/** A row of log_tiles: tree level 8 × `level`, nodes 256 × idx …, 32 bytes each. */
export interface TileRow {
  level: number;
  idx: number;
  data: Buffer;
}

/** Hashes a run of 256 node hashes at words[0..2048) up to their root, in place (at 0). */
function reduceTile(words: Int32Array): void {
  for (let width = 256; width > 1; width >>= 1) {
    for (let k = 0; k < width / 2; k++) nodeHashWords(words, 16 * k, 16 * k + 8, words, 8 * k);
  }
}

/**
 * The synthetic log's tree, built in one pass over its leaves, 256 at a time, in constant
 * memory (a tile per level, the frontier): the log_tiles rows the log's own append would
 * write for the same leaves (levels ≥ 1; level 0 is log_entries), and the root of the tree at
 * each asked size, computed without the database.
 */
export class SyntheticTree {
  /** Full tile rows as they complete; {@link finish} adds the partial ones. */
  readonly rows: TileRow[] = [];
  /** The root at each size asked for (and at n). */
  readonly roots = new Map<number, Buffer>();
  private nextTile = 0;
  private readonly leaves = new Int32Array(256 * 8);
  private readonly data = new Int32Array(8);
  /** The node hashes of each tile level (from 1) not yet in a full tile. */
  private readonly levels: { words: Int32Array; count: number; idx: number }[] = [];
  /** The full subtrees (levels ≥ 8) of the leaves hashed so far, largest first. */
  private readonly frontier: { level: number; words: Int32Array }[] = [];
  private readonly samples = new Map<number, number[]>();

  constructor(
    readonly n: number,
    sizes: Iterable<number> = [],
  ) {
    for (const m of [...sizes, n]) {
      if (!(m >= 1 && m <= n)) throw new Error(`no tree of size ${m} in ${n}`);
      const tile = Math.floor((m - 1) / 256);
      this.samples.set(tile, [...(this.samples.get(tile) ?? []), m]);
    }
  }

  get done(): boolean {
    return this.nextTile * 256 >= this.n;
  }

  /** How many leaves are hashed so far. */
  get hashed(): number {
    return Math.min(this.n, this.nextTile * 256);
  }

  /** Hashes the next `tiles` tiles' worth of leaves (256 each). */
  advance(tiles: number): void {
    for (let t = 0; t < tiles && !this.done; t++) {
      const tile = this.nextTile++;
      const start = tile * 256;
      const count = Math.min(256, this.n - start);
      for (let j = 0; j < count; j++) {
        leafDataWords(start + j, this.data, 0);
        leafHashWords(this.data, 0, this.leaves, 8 * j);
      }
      for (const m of this.samples.get(tile) ?? []) {
        const parts = [...this.frontier.map((f) => f.words), rootOfRun(this.leaves, 0, m - start)];
        this.roots.set(m, bytesOfWords(foldRight(parts), 0));
      }
      if (count < 256) continue;
      reduceTile(this.leaves);
      const top = this.leaves.slice(0, 8);
      this.pushLevel(1, top);
      let node8: { level: number; words: Int32Array } = { level: 8, words: top };
      for (
        let last = this.frontier.at(-1);
        last?.level === node8.level;
        last = this.frontier.at(-1)
      ) {
        this.frontier.pop();
        node8 = { level: node8.level + 1, words: node(last.words, node8.words) };
      }
      this.frontier.push(node8);
    }
  }

  private pushLevel(level: number, words: Int32Array): void {
    let acc = this.levels[level - 1];
    if (!acc) {
      acc = { words: new Int32Array(256 * 8), count: 0, idx: 0 };
      this.levels[level - 1] = acc;
    }
    acc.words.set(words, 8 * acc.count);
    acc.count++;
    if (acc.count < 256) return;
    this.rows.push({ level, idx: acc.idx, data: this.bytes(acc.words, 256) });
    reduceTile(acc.words);
    acc.count = 0;
    acc.idx++;
    this.pushLevel(level + 1, acc.words.slice(0, 8));
  }

  private bytes(words: Int32Array, count: number): Buffer {
    return Buffer.concat(Array.from({ length: count }, (_, k) => bytesOfWords(words, 8 * k)));
  }

  /** After the last leaf: the partial tiles (the complete nodes of the ragged right edge). */
  finish(): void {
    if (!this.done) throw new Error('the tree is not complete');
    this.levels.forEach((acc, i) => {
      if (acc.count > 0) {
        this.rows.push({ level: i + 1, idx: acc.idx, data: this.bytes(acc.words, acc.count) });
      }
    });
  }
}
