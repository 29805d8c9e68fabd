import { randomFillSync } from 'node:crypto';
import { Type } from 'typebox';

/** Every id prefix in one table (docs/api.md, "Identifiers"). */
export const ID_PREFIXES = {
  organization: 'org',
  wallet: 'wal',
  apiKey: 'key',
  object: 'obj',
  template: 'tpl',
  action: 'act',
  batch: 'bat',
  webhook: 'whk',
  event: 'evt',
  deposit: 'dep',
  message: 'msg',
  session: 'ses',
  member: 'mem',
  file: 'fil',
  credential: 'crd',
  ledger: 'led',
  code: 'cod',
  request: 'req',
  policy: 'pol',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford base32, as ULID

let lastTime = -1;
/** encodeTime(lastTime), kept: most ids of a busy process share their millisecond. */
let lastTimeText = '';
/** The random part of the last id, incremented in place within one millisecond. */
const lastRandom = new Uint8Array(10);
/**
 * Random bytes drawn 4 KB at a time: a busy process starts a new millisecond for almost
 * every request, and one call for 10 bytes cost more than the id's other work together.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function freshRandom(into: Uint8Array): void {
  if (poolAt + into.length > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  // Each byte is used once.
  into.set(pool.subarray(poolAt, poolAt + into.length));
  poolAt += into.length;
}

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** 40 bits (a number below 2^40) as 8 base32 characters. */
function encode40(n: number): string {
  let out = '';
  let v = n;
  for (let i = 0; i < 8; i++) {
    out = ALPHABET[v % 32]! + out;
    v = Math.floor(v / 32);
  }
  return out;
}

/** Bytes o..o+4 as one number below 2^40 (exact in a double). */
function half(b: Uint8Array, o: number): number {
  return (
    b[o]! * 2 ** 32 + b[o + 1]! * 2 ** 24 + b[o + 2]! * 2 ** 16 + b[o + 3]! * 2 ** 8 + b[o + 4]!
  );
}

/** 80 bits as 16 base32 characters (exported for its test). */
export function encodeRandom(b: Uint8Array): string {
  // 80 bits → 16 characters: two 40-bit halves.
  return encode40(half(b, 0)) + encode40(half(b, 5));
}

/**
 * A ULID: 48 bits of milliseconds then 80 random bits. Within one millisecond the random
 * part is incremented, so ids made by one process sort in creation order.
 */
export function ulid(now: number = Date.now()): string {
  if (now <= lastTime) {
    for (let i = lastRandom.length - 1; i >= 0; i--) {
      if (lastRandom[i] === 255) {
        lastRandom[i] = 0;
      } else {
        lastRandom[i] = lastRandom[i]! + 1;
        break;
      }
    }
    return lastTimeText + encodeRandom(lastRandom);
  }
  lastTime = now;
  lastTimeText = encodeTime(now);
  freshRandom(lastRandom);
  return lastTimeText + encodeRandom(lastRandom);
}

export function newId(kind: IdKind, now?: number): string {
  return `${ID_PREFIXES[kind]}_${ulid(now)}`;
}

const ULID_CHARS = '[0-9A-HJKMNP-TV-Z]{26}';
const ID_RE = new RegExp(`^[a-z]{3}_${ULID_CHARS}$`);

/** True when `value` is a well-formed id of that kind. */
export function isId(kind: IdKind, value: string): boolean {
  return ID_RE.test(value) && value.startsWith(`${ID_PREFIXES[kind]}_`);
}

/** The JSON Schema pattern of an id of that kind: its prefix, `_`, then a ULID. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_${ULID_CHARS}$`;
}

const KIND_OF_PATTERN = new Map(
  (Object.keys(ID_PREFIXES) as IdKind[]).map((kind) => [idPattern(kind), kind]),
);

/** The kind whose `idPattern` this is (lets a schema failure say "not a template id"). */
export function idKindOfPattern(pattern: string): IdKind | undefined {
  return KIND_OF_PATTERN.get(pattern);
}

/**
 * The schema of an id in a path (docs/api.md, "Identifiers"): every route's params use it, so a
 * malformed id is refused (400 code 3 naming the parameter) before any lookup, and only a
 * well-formed unknown id is "not found".
 */
export function IdParam(kind: IdKind) {
  return Type.String({
    pattern: idPattern(kind),
    maxLength: 30,
    description: `${kind} id: \`${ID_PREFIXES[kind]}_\` then 26 characters (a ULID)`,
  });
}
