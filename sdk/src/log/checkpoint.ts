import { hex } from '../verify/bytes.js';
import { fromBase64 } from './base64.js';
import { verifyCosignature, type Cosignature } from './cosignature.js';
import {
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  NoteError,
  parseNote,
  parseVerifierKey,
  verifyNoteSignature,
  type Note,
  type VerifierKey,
} from './note.js';

/**
 * C2SP tlog-checkpoint: the note text is `<origin>\n<tree size>\n<base64 root hash>\n`
 * then optional extension lines. The service adds one, `ons-batch <sequence> <0x batch
 * hash>`, naming the batch whose seal produced the checkpoint.
 */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** The extension lines, as they are. */
  extensions: string[];
  /** The `ons-batch` extension, when there is one. */
  batch: { sequence: number; hash: string } | null;
  /** The note text the signatures cover. */
  body: string;
}

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * How far ahead of the verifier's clock a cosignature may be dated and still count as fresh
 * (`maxAgeSeconds`): a witness's clock may run a little ahead; one dated later would count as
 * fresh until that time comes (a year ahead: a year). The service refuses to store such a
 * line with the same bound.
 */
export const COSIGNATURE_MAX_AHEAD_SECONDS = 600;

/** Parses a checkpoint's note text (without signatures); throws NoteError. */
export function parseCheckpointBody(body: string): Checkpoint {
  if (!body.endsWith('\n')) throw new NoteError('malformed checkpoint');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) throw new NoteError('malformed checkpoint');
  const [origin, sizeText, rootText] = lines as [string, string, string];
  const extensions = lines.slice(3);
  if (origin.length === 0 || !DECIMAL.test(sizeText) || extensions.some((l) => l === '')) {
    throw new NoteError('malformed checkpoint');
  }
  const size = Number(sizeText);
  const root = fromBase64(rootText);
  if (!Number.isSafeInteger(size) || !root || root.length !== 32) {
    throw new NoteError('malformed checkpoint');
  }
  let batch: Checkpoint['batch'] = null;
  for (const line of extensions) {
    if (!line.startsWith('ons-batch ')) continue;
    const m = /^ons-batch ([1-9][0-9]*) (0x[0-9a-f]{64})$/.exec(line);
    if (!m || batch !== null || !Number.isSafeInteger(Number(m[1]))) {
      throw new NoteError('malformed ons-batch line');
    }
    batch = { sequence: Number(m[1]), hash: m[2]! };
  }
  return { origin, size, root, extensions, batch, body };
}

/** `0x` hex of a checkpoint's root (the service's proofs use that spelling). */
export const rootHex = (c: Checkpoint): string => hex(c.root);

export interface CheckpointOptions {
  /** The log's verifier key (`GET /public/network` → `log.verifier_key`), text or parsed. */
  logKey: string | VerifierKey;
  /** Witness verifier keys (cosignature/v1); cosignatures by other keys are ignored. */
  witnessKeys?: readonly (string | VerifierKey)[];
  /** How many of `witnessKeys` must have cosigned (default 0). */
  minCosignatures?: number;
  /**
   * Only cosignatures at most this many seconds old (by the time each witness signed into
   * it) count towards `minCosignatures`, and none dated more than
   * COSIGNATURE_MAX_AHEAD_SECONDS (600) after `now`. The service has its witnesses cosign
   * the latest checkpoint again at least hourly even when the log does not grow, so a log
   * that stops showing fresh cosignatures is frozen, or is showing this verifier an old
   * view. Without it, age is not checked.
   */
  maxAgeSeconds?: number;
  /** The verifier's time, unix seconds (default: the clock's). */
  now?: number;
}

export interface CheckedCheckpoint {
  ok: boolean;
  /**
   * What failed, each `<check>: <words>`; check is `format`, `key`, `signature`,
   * `cosignature`, `cosignatures` (too few) or `stale` (too few within `maxAgeSeconds`).
   */
  errors: string[];
  checkpoint: Checkpoint | null;
  /** The witnesses whose cosignature verified. */
  cosignatures: Cosignature[];
}

const keyOf = (k: string | VerifierKey): VerifierKey =>
  typeof k === 'string' ? parseVerifierKey(k) : k;

/**
 * Checks a signed checkpoint: the format, the log's Ed25519 signature (the key's name must
 * be the origin), each cosignature by a given witness key, and the quorum. Never throws.
 */
export async function verifyCheckpoint(
  text: string,
  options: CheckpointOptions,
): Promise<CheckedCheckpoint> {
  const errors: string[] = [];
  const done = (checkpoint: Checkpoint | null, cosignatures: Cosignature[] = []) => ({
    ok: errors.length === 0,
    errors,
    checkpoint,
    cosignatures,
  });
  let logKey: VerifierKey;
  let witnesses: VerifierKey[];
  try {
    logKey = keyOf(options.logKey);
    // A key named twice is one witness: it must not count twice towards minCosignatures.
    const byId = new Map((options.witnessKeys ?? []).map(keyOf).map((k) => [idOf(k), k]));
    witnesses = [...byId.values()];
  } catch (err) {
    errors.push(`key: ${(err as Error).message}`);
    return done(null);
  }
  if (logKey.alg !== ALG_ED25519) errors.push('key: the log key is not an Ed25519 note key');
  if (witnesses.some((w) => w.alg !== ALG_COSIGNATURE_V1)) {
    errors.push('key: a witness key is not a cosignature/v1 key');
  }
  const min = options.minCosignatures ?? 0;
  if (!Number.isSafeInteger(min) || min < 0) {
    errors.push('key: minCosignatures is not a whole number ≥ 0');
  }
  const maxAge = options.maxAgeSeconds;
  if (maxAge !== undefined && (!Number.isSafeInteger(maxAge) || maxAge <= 0)) {
    errors.push('key: maxAgeSeconds is not a whole number > 0');
  }
  if (errors.length > 0) return done(null);
  let note: Note;
  let checkpoint: Checkpoint;
  try {
    note = parseNote(text);
    checkpoint = parseCheckpointBody(note.body);
  } catch (err) {
    errors.push(`format: ${(err as Error).message}`);
    return done(null);
  }
  if (checkpoint.origin !== logKey.name) {
    errors.push(`signature: the checkpoint's origin ${checkpoint.origin} is not the key's name`);
    return done(checkpoint);
  }
  const own = note.signatures.filter((s) => s.name === logKey.name && s.keyId === logKey.keyId);
  if (own.length === 0) errors.push("signature: no signature by the log's key");
  for (const s of own) {
    if (!(await verifyNoteSignature(note.body, s, logKey))) {
      errors.push("signature: the log's signature does not verify");
      break;
    }
  }
  const cosignatures: Cosignature[] = [];
  for (const w of witnesses) {
    const lines = note.signatures.filter((s) => s.name === w.name && s.keyId === w.keyId);
    let good: Cosignature | null = null;
    for (const s of lines) {
      const c = await verifyCosignature(note.body, s, w);
      if (c === null) errors.push(`cosignature: ${w.name}'s cosignature does not verify`);
      else good ??= c;
    }
    if (good) cosignatures.push(good);
  }
  if (cosignatures.length < min) {
    errors.push(`cosignatures: ${cosignatures.length} valid, at least ${min} required`);
  } else if (maxAge !== undefined) {
    const now = Math.floor(options.now ?? Date.now() / 1000);
    const latest = now + COSIGNATURE_MAX_AHEAD_SECONDS;
    const fresh = cosignatures.filter((c) => c.timestamp >= now - maxAge && c.timestamp <= latest);
    if (fresh.length < min) {
      const ahead = cosignatures.filter((c) => c.timestamp > latest).length;
      const past = cosignatures.filter((c) => c.timestamp <= latest).map((c) => c.timestamp);
      const why = [
        ...(past.length > 0 ? [`the newest is ${now - Math.max(...past)} s old`] : []),
        ...(ahead > 0
          ? [`${ahead} dated over ${COSIGNATURE_MAX_AHEAD_SECONDS} s ahead of this clock`]
          : []),
      ];
      errors.push(
        `stale: ${fresh.length} of the cosignatures are at most ${maxAge} s old, at least ` +
          `${min} required (${why.join('; ')})`,
      );
    }
  }
  return done(checkpoint, cosignatures);
}

/** A verifier key's identity: its name and key id (what a signature line is matched by). */
function idOf(k: VerifierKey): string {
  return `${k.name}\n${k.keyId}`;
}
