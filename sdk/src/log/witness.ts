import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { equalBytes, sha256 } from '../verify/bytes.js';
import { fromBase64, toBase64 } from './base64.js';
import { parseCheckpointBody, type Checkpoint } from './checkpoint.js';
import { parseNote, verifyNoteSignature, type VerifierKey } from './note.js';
import { cosignatureLine, cosignatureVerifierKey, type SignerKey } from './signer.js';
import { readState, writeState } from './state-file.js';
import { verifyConsistencyProof } from './tree.js';

/**
 * A C2SP tlog-witness (node-only): `POST /add-checkpoint` with the body
 * `old <size>\n` + one base64 consistency-proof hash per line + `\n` + a signed checkpoint.
 * The witness cosigns (tlog-cosignature v1) a checkpoint of a log it knows only when it is
 * consistent with the last one it cosigned for that log, and records it before answering,
 * so it never signs two views of one log. Answers, checked in this order (tlog-witness's
 * own; docs/log.md, "Witnesses", has the table): 400 malformed; 404 unknown log; 403 not
 * signed by the log's key; 400 smaller than `old`; 409 `old` is not the size it recorded
 * (the body, `text/x.tlog.size`, says which); 409 (plain text) the checkpoint is of the size
 * it recorded with another root; 422 the proof does not prove consistency; 409 (plain text)
 * the checkpoint is of the size it recorded, with its root, but another text (this
 * project's rule: tlog-witness does not look past the root); 200 the cosignature line.
 */

export const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_PROOF_LINES = 63;

interface LogState {
  size: number;
  /** base64 root hash of the recorded checkpoint. */
  root: string;
  /** The checkpoint text as cosigned (for the operator's eyes). */
  checkpoint: string;
}

export interface WitnessState {
  version: 1;
  logs: Record<string, LogState>;
}

export interface WitnessOptions {
  signer: SignerKey;
  /** The logs it witnesses (note verifier keys; the key name is the log's origin). */
  logs: readonly VerifierKey[];
  statePath: string;
  /** Unix seconds (tests). */
  now?: () => number;
}

export interface WitnessAnswer {
  status: number;
  contentType: string;
  body: string;
}

const answer = (status: number, body: string, contentType = 'text/plain; charset=utf-8') => ({
  status,
  body: body.endsWith('\n') ? body : `${body}\n`,
  contentType,
});

interface Request {
  old: number;
  proof: Uint8Array[];
  checkpoint: string;
}

function parseRequest(text: string): Request | null {
  const first = text.indexOf('\n');
  const m = /^old (0|[1-9][0-9]{0,15})$/.exec(text.slice(0, first));
  if (first < 0 || !m) return null;
  const proof: Uint8Array[] = [];
  let at = first + 1;
  for (;;) {
    const end = text.indexOf('\n', at);
    if (end < 0) return null;
    const line = text.slice(at, end);
    at = end + 1;
    if (line === '') break;
    const h = fromBase64(line);
    if (!h || h.length !== 32 || proof.length >= MAX_PROOF_LINES) return null;
    proof.push(h);
  }
  const old = Number(m[1]);
  return Number.isSafeInteger(old) ? { old, proof, checkpoint: text.slice(at) } : null;
}

export class Witness {
  private state: WitnessState = { version: 1, logs: {} };
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly opts: WitnessOptions) {}

  /** Loads the state file (an unreadable one is an error: the witness refuses to start). */
  static async open(opts: WitnessOptions): Promise<Witness> {
    const w = new Witness(opts);
    const s = await readState<WitnessState>(opts.statePath);
    if (s !== null) {
      if (s.version !== 1 || typeof s.logs !== 'object' || s.logs === null) {
        throw new Error(`${opts.statePath} is not a witness state file`);
      }
      w.state = s;
    }
    return w;
  }

  /** The witness's cosignature verifier key (what logs and clients configure). */
  get verifierKey(): string {
    return cosignatureVerifierKey(this.opts.signer);
  }

  /** One `add-checkpoint` request; requests are handled one at a time. */
  addCheckpoint(body: string): Promise<WitnessAnswer> {
    const run = this.queue.then(() => this.handle(body));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async handle(body: string): Promise<WitnessAnswer> {
    const req = parseRequest(body);
    if (!req) return answer(400, 'malformed request');
    let cp: Checkpoint;
    let note;
    try {
      note = parseNote(req.checkpoint);
      cp = parseCheckpointBody(note.body);
    } catch {
      return answer(400, 'malformed checkpoint');
    }
    const key = this.opts.logs.find((k) => k.name === cp.origin);
    if (!key) return answer(404, 'unknown log');
    const own = note.signatures.filter((s) => s.name === key.name && s.keyId === key.keyId);
    let signed = own.length > 0;
    for (const s of own) signed &&= await verifyNoteSignature(note.body, s, key);
    if (!signed) return answer(403, "not signed by the log's key");
    // tlog-witness checks `old` against the checkpoint before against its record: an `old`
    // past the checkpoint is a bad request whatever the witness recorded.
    if (cp.size < req.old) return answer(400, 'the checkpoint is smaller than old');
    const known = this.state.logs[cp.origin];
    const size = known?.size ?? 0;
    if (req.old !== size) return answer(409, String(size), 'text/x.tlog.size');
    const oldRoot = known ? fromBase64(known.root)! : sha256();
    // The size it recorded with another root: tlog-witness names this a conflict (409), not a
    // failed proof, though the empty proof fails too. Plain text: not a size to retry from.
    if (known && cp.size === known.size && !equalBytes(cp.root, oldRoot)) {
      return answer(409, 'another root at the size it cosigned (a split view)');
    }
    if (!verifyConsistencyProof(req.old, cp.size, req.proof, oldRoot, cp.root)) {
      return answer(422, 'the proof does not prove consistency with the last checkpoint');
    }
    // The size it recorded, the same root: the text must be the same too. The log signs one
    // checkpoint per size (every batch holds an action), so another text (another ons-batch
    // line) is a second batch header for one tree. A conflict, as tlog-witness answers a
    // root that differs at the recorded size (plain text: not a size to retry from).
    if (known && cp.size === known.size && note.body !== known.checkpoint) {
      return answer(409, 'another checkpoint of the size it cosigned (its text differs)');
    }
    // Recorded on disk before the cosignature leaves: after a crash the witness still
    // refuses what is not consistent with everything it ever signed.
    const next: WitnessState = {
      version: 1,
      logs: {
        ...this.state.logs,
        [cp.origin]: { size: cp.size, root: toBase64(cp.root), checkpoint: note.body },
      },
    };
    await writeState(this.opts.statePath, next);
    this.state = next;
    const now = Math.floor(this.opts.now?.() ?? Date.now() / 1000);
    return answer(200, cosignatureLine(this.opts.signer, note.body, now));
  }

  /** Serves `POST /add-checkpoint` on `host:port` (port 0: any free port). */
  async listen(port: number, host = '127.0.0.1'): Promise<{ url: string; server: Server }> {
    const server = createServer((req, res) => {
      // A request that fails while it is read (its client went away) ends only that request.
      this.serve(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(400).end();
        req.destroy();
      });
    });
    // A request is small: one that trickles in is cut off instead of held for minutes.
    server.requestTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const a = server.address() as AddressInfo;
    const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    return { url: `http://${h}:${a.port}`, server };
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (a: WitnessAnswer) => {
      res.writeHead(a.status, { 'content-type': a.contentType, 'cache-control': 'no-store' });
      res.end(a.body);
    };
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/add-checkpoint') return send(answer(404, 'not found'));
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return send(answer(405, 'POST only'));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > MAX_REQUEST_BYTES) {
        send(answer(413, 'request too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    } catch {
      return send(answer(400, 'not UTF-8'));
    }
    try {
      send(await this.addCheckpoint(text));
    } catch {
      send(answer(500, 'the witness could not record its state'));
    }
  }
}
