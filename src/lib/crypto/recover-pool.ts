import { Worker } from 'node:worker_threads';
import { recoverAddress, type RecoveryInput } from './eip191.js';

interface Pending {
  inputs: RecoveryInput[];
  resolves: ((address: string | null) => void)[];
}

/** Messages in flight at which requests stop going at the next turn and gather instead. */
const MAX_IN_FLIGHT = 2;
/** Most recoveries in one message (~0.6 ms of the thread's work). */
const MAX_PER_MESSAGE = 10;

/**
 * Signature recovery (native secp256k1, ~65 µs each) on a thread of its own, so the event
 * loop that parses requests and commits groups does not pay for it. Requests made in one
 * turn of the event loop go to the thread in messages of at most MAX_PER_MESSAGE, each
 * answered as one, in order; while the thread holds MAX_IN_FLIGHT messages, requests gather
 * and go when an answer comes back, so under load a message carries many (a message and the
 * thread's wake-up cost more than one recovery). The cap keeps a burst's first requests from
 * waiting for its last: answered a message at a time, they reach the group committer while
 * the thread works on the rest (docs/performance.md, "Wave 3, session 21"). If the thread
 * fails, what it had is recovered inline and a new thread takes over.
 */
export class RecoverPool {
  private worker: Worker | null = null;
  private batch: Pending | null = null;
  private readonly inFlight: Pending[] = [];
  private closed = false;
  /** Messages sent to the thread and the recoveries they carried (for tests and metrics). */
  readonly sent = { messages: 0, inputs: 0 };

  recover(input: RecoveryInput): Promise<string | null> {
    if (this.closed) return Promise.resolve(recoverAddress(input));
    return new Promise((resolve) => {
      if (!this.batch) {
        this.batch = { inputs: [], resolves: [] };
        if (this.inFlight.length < MAX_IN_FLIGHT) setImmediate(() => this.flush());
      }
      this.batch.inputs.push(input);
      this.batch.resolves.push(resolve);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    const w = this.worker;
    this.worker = null;
    this.recoverInline();
    if (w) await w.terminate();
  }

  private flush(): void {
    const b = this.batch;
    this.batch = null;
    if (!b) return;
    if (this.closed) {
      b.inputs.forEach((input, i) => b.resolves[i]!(recoverAddress(input)));
      return;
    }
    for (let at = 0; at < b.inputs.length; at += MAX_PER_MESSAGE) {
      const part: Pending = {
        inputs: b.inputs.slice(at, at + MAX_PER_MESSAGE),
        resolves: b.resolves.slice(at, at + MAX_PER_MESSAGE),
      };
      this.inFlight.push(part);
      this.sent.messages++;
      this.sent.inputs += part.inputs.length;
      this.thread().postMessage(part.inputs.map((i) => [i.text, i.signature, i.recid]));
    }
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./recover-worker.mjs', import.meta.url));
    w.unref();
    w.on('message', (addresses: (string | null)[]) => {
      const b = this.inFlight.shift();
      b?.resolves.forEach((resolve, i) => resolve(addresses[i] ?? null));
      // What gathered while the thread was full goes now.
      if (this.batch && this.inFlight.length < MAX_IN_FLIGHT) this.flush();
    });
    const lost = () => {
      if (this.worker !== w) return;
      this.worker = null;
      this.recoverInline();
      // What gathered for the lost thread goes to a new one.
      if (this.batch) this.flush();
    };
    w.on('error', lost);
    w.on('exit', lost);
    this.worker = w;
    return w;
  }

  /** Answers everything sent to a thread that is gone. */
  private recoverInline(): void {
    for (const b of this.inFlight.splice(0)) {
      b.inputs.forEach((input, i) => b.resolves[i]!(recoverAddress(input)));
    }
  }
}
