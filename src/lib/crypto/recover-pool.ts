import { Worker } from 'node:worker_threads';
import { recoverAddress, type RecoveryInput } from './eip191.js';

interface Pending {
  inputs: RecoveryInput[];
  resolves: ((address: string | null) => void)[];
}

/**
 * Signature recovery (native secp256k1, ~65 µs each) on a thread of its own, so the event
 * loop that parses requests and commits groups does not pay for it. Requests made in one
 * turn of the event loop go to the thread as one message and come back as one, in order.
 * If the thread fails, what it had is recovered inline and a new thread takes over.
 */
export class RecoverPool {
  private worker: Worker | null = null;
  private batch: Pending | null = null;
  private readonly inFlight: Pending[] = [];
  private closed = false;

  recover(input: RecoveryInput): Promise<string | null> {
    if (this.closed) return Promise.resolve(recoverAddress(input));
    return new Promise((resolve) => {
      if (!this.batch) {
        this.batch = { inputs: [], resolves: [] };
        setImmediate(() => this.flush());
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
    this.inFlight.push(b);
    this.thread().postMessage(b.inputs.map((i) => [i.text, i.signature, i.recid]));
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./recover-worker.mjs', import.meta.url));
    w.unref();
    w.on('message', (addresses: (string | null)[]) => {
      const b = this.inFlight.shift();
      b?.resolves.forEach((resolve, i) => resolve(addresses[i] ?? null));
    });
    const lost = () => {
      if (this.worker !== w) return;
      this.worker = null;
      this.recoverInline();
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
