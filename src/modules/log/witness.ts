import { parseVerifierKey, splitNote, verifyCosignatureLine, type Verifier } from './note.js';

/** A configured witness (LOG_WITNESSES): its cosignature key and where it listens. */
export interface WitnessConfig {
  verifier: Verifier;
  /** The key in its text form (served in /public/network). */
  vkey: string;
  url: string;
}

/**
 * Parses LOG_WITNESSES: a comma list of `<witness verifier key>=<http(s) URL>` (the key's
 * base64 is 44 characters with no padding, so the first `=` ends it). Throws on a bad entry.
 */
export function parseWitnesses(text: string): WitnessConfig[] {
  const out: WitnessConfig[] = [];
  for (const entry of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.indexOf('=');
    const vkey = at < 0 ? '' : entry.slice(0, at);
    const url = at < 0 ? '' : entry.slice(at + 1).replace(/\/+$/, '');
    const verifier = parseVerifierKey(vkey);
    let protocol = '';
    try {
      protocol = new URL(url).protocol;
    } catch {
      // reported below
    }
    if (!verifier || verifier.alg !== 0x04 || (protocol !== 'http:' && protocol !== 'https:')) {
      throw new Error(
        `LOG_WITNESSES: "${entry.slice(0, 120)}" is not <witness verifier key (type 0x04)>=<http(s) URL>`,
      );
    }
    out.push({ verifier, vkey, url });
  }
  return out;
}

export type WitnessAnswer =
  | { kind: 'cosigned'; line: string }
  | { kind: 'size'; size: number }
  | { kind: 'refused'; status: number; message: string };

/** How long a witness may take to answer before it counts as down. */
export const WITNESS_TIMEOUT_MS = 5_000;

/**
 * How far ahead of the log's clock a cosignature's time may be. A witness whose clock runs
 * later, or that signs a made-up time, would have its line served as fresh for as long as
 * that time lies ahead (a verifier's `maxAgeSeconds`), and a time past 2^53 breaks every
 * client's check of the served note; such a line is refused, not stored.
 */
export const MAX_COSIGNATURE_AHEAD_SECONDS = 600;

/** What is read of a witness's answer at most (a cosignature line is ~100 bytes). */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The first `max` bytes of an answer as text; the rest is not read (the stream is cancelled). */
async function readCapped(res: Response, max: number): Promise<string> {
  if (res.body === null) return '';
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
  }
  if (total >= max) await reader.cancel().catch(() => undefined);
  return Buffer.concat(chunks).subarray(0, max).toString('utf8');
}

/**
 * One C2SP tlog-witness `add-checkpoint` request: `old <size>`, the consistency proof from
 * that size (base64 lines), a blank line and the signed checkpoint. A 200's lines are kept
 * only if one of them is a valid cosignature of this checkpoint by this witness's key, dated
 * at most MAX_COSIGNATURE_AHEAD_SECONDS after `now` (the log's clock).
 */
export async function addCheckpoint(
  w: WitnessConfig,
  old: number,
  proof: readonly Buffer[],
  note: string,
  now: Date,
  timeoutMs = WITNESS_TIMEOUT_MS,
): Promise<WitnessAnswer> {
  const body = `old ${old}\n${proof.map((p) => `${p.toString('base64')}\n`).join('')}\n${note}`;
  const res = await fetch(`${w.url}/add-checkpoint`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'text/plain; charset=utf-8' },
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'error',
  });
  const text = await readCapped(res, MAX_ANSWER_BYTES);
  if (res.status === 409) {
    const size = Number(text.trim());
    if (Number.isSafeInteger(size) && size >= 0) return { kind: 'size', size };
    // A plain-text 409 is a conflict at the size it cosigned (another root, or another text
    // with the SDK's witness): its words go to the log's warning.
    const words = text.trim().slice(0, 200);
    return { kind: 'refused', status: 409, message: `a 409 without a tree size: ${words}` };
  }
  if (res.status !== 200)
    return { kind: 'refused', status: res.status, message: text.slice(0, 200) };
  const parts = splitNote(note);
  if (!parts) return { kind: 'refused', status: 200, message: 'bad note' };
  const latest = BigInt(Math.floor(now.getTime() / 1000) + MAX_COSIGNATURE_AHEAD_SECONDS);
  let ahead: bigint | null = null;
  for (const raw of text.split('\n')) {
    // A witness answering with CRLF line ends: the line is kept without its CR.
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const time = verifyCosignatureLine(parts.body, line, w.verifier);
    if (time === null) continue;
    if (time <= latest) return { kind: 'cosigned', line };
    ahead ??= time;
  }
  if (ahead !== null) {
    const message = `the cosignature's time ${ahead} is more than ${MAX_COSIGNATURE_AHEAD_SECONDS} s ahead of the log's clock`;
    return { kind: 'refused', status: 200, message };
  }
  return { kind: 'refused', status: 200, message: 'no valid cosignature by the witness key' };
}
