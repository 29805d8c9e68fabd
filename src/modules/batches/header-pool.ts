import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { computeHeader, type ComputedHeader, type HeaderInput } from './header.js';

interface Pending {
  resolve: (h: ComputedHeader) => void;
  reject: (err: Error) => void;
  input: HeaderInput;
}

/**
 * Batch headers computed on a thread of their own: a batch's trees and content hash (tens of
 * milliseconds for 1,000 actions) would otherwise run on the event loop that serves requests
 * and commits groups (docs/performance.md, "Transaction batches"). If the thread cannot start
 * or dies, what it had, and what comes after, is computed inline; an error in a header
 * itself is the caller's, as it would be inline.
 */
export class HeaderPool {
  private worker: Worker | null = null;
  private broken = false;
  private closed = false;
  private next = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly logger: Logger) {}

  /** Whether headers go to the thread (false once it failed, or after close). */
  get threaded(): boolean {
    return !this.broken && !this.closed;
  }

  compute(input: HeaderInput): Promise<ComputedHeader> {
    const w = this.threaded ? this.thread() : null;
    if (!w) return computeHeader(input);
    return new Promise((resolve, reject) => {
      const n = this.next++;
      this.pending.set(n, { resolve, reject, input });
      w.postMessage({ n, input });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.failOver();
    if (w) await w.terminate();
  }

  private thread(): Worker | null {
    if (this.worker) return this.worker;
    try {
      const w = new Worker(new URL('./header-thread.mjs', import.meta.url));
      w.on('message', (m: { n: number; header?: ComputedHeader; error?: string }) => {
        const p = this.pending.get(m.n);
        if (!p) return;
        this.pending.delete(m.n);
        if (m.header) p.resolve(m.header);
        else p.reject(new Error(m.error ?? 'the header thread failed'));
      });
      w.on('error', (err) => {
        this.logger.error({ err }, 'the batch header thread failed; computing headers inline');
        this.broken = true;
        this.worker = null;
        this.failOver();
      });
      w.on('exit', () => {
        if (this.worker === w) this.worker = null;
        this.failOver();
      });
      // An idle thread does not keep the process alive.
      w.unref();
      this.worker = w;
      return w;
    } catch (err) {
      this.logger.error({ err }, 'the batch header thread could not start; computing inline');
      this.broken = true;
      return null;
    }
  }

  /** Computes inline what the thread still had. */
  private failOver(): void {
    for (const [n, p] of this.pending) {
      this.pending.delete(n);
      computeHeader(p.input).then(p.resolve, p.reject);
    }
  }
}
