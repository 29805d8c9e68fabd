import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { HeaderPriority } from '../../config.js';
import type { ContentAction } from './content.js';
import {
  computeHeader,
  type ComputedHeader,
  type HeaderInput,
  type HeaderLeaves,
  type HeaderRequest,
} from './header.js';
import type { SealedLeaves } from './sealed-leaves.js';

/** Reads a sealed batch's actions as logged, in execution order (on the caller's thread). */
export type ActionsReader = () => Promise<ContentAction[]>;

interface Pending {
  resolve: (h: ComputedHeader) => void;
  reject: (err: Error) => void;
  request: HeaderRequest;
  read: ActionsReader;
}

/** The header thread's options. */
export interface HeaderPoolOptions {
  /** The database's connection string: the thread reads each batch's actions itself. */
  databaseUrl?: string;
  /** How the thread yields to requests (header-thread.ts); `idle` when not given. */
  priority?: HeaderPriority;
  /**
   * Where the leaves of each header the thread read and computed are kept for the
   * transparency log (sealed-leaves.ts); without it they are dropped.
   */
  leaves?: SealedLeaves;
}

/** The thread as it started: its Linux thread id (null elsewhere) and the priority it got. */
export interface HeaderThreadInfo {
  tid: number | null;
  priority: HeaderPriority;
}

/** How long close() waits for the thread to end its database connection. */
const CLOSE_WAIT_MS = 2_000;

/**
 * Batch headers computed on a thread of their own: a batch's trees and content hash (tens of
 * milliseconds for 1,000 actions) would otherwise run on the event loop that serves requests
 * and commits groups (docs/performance.md, "Transaction batches").
 *
 * Given the database's connection string, the thread also reads the batch's actions itself,
 * on a connection of its own: the megabyte of rows a 1,000-action batch is then never parsed,
 * copied or collected on the event loop. A sealed batch's actions no longer change, so what
 * the thread reads outside the sealer's transaction is what the transaction would read.
 *
 * If the thread cannot start or dies, what it had, and what comes after, is read and computed
 * inline; an error in a header itself (or in the thread's read) is the caller's, as it would
 * be inline.
 */
/**
 * The thread's entry: run from the sources (tsx, the tests) it is the .mjs that registers
 * the TypeScript loader a thread does not inherit; built (dist/, `npm run build`) it is the
 * thread's own compiled JavaScript, and no loader is needed.
 */
const HEADER_THREAD = import.meta.url.endsWith('.ts')
  ? './header-thread.mjs'
  : './header-thread.js';

export class HeaderPool {
  private worker: Worker | null = null;
  private broken = false;
  private closed = false;
  private next = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly databaseUrl: string | undefined;
  private readonly priority: HeaderPriority;
  private readonly leaves: SealedLeaves | undefined;
  private started: Promise<HeaderThreadInfo | null> = Promise.resolve(null);
  private onStarted: (info: HeaderThreadInfo | null) => void = () => {};

  constructor(
    private readonly logger: Logger,
    opts: HeaderPoolOptions = {},
  ) {
    this.databaseUrl = opts.databaseUrl;
    this.priority = opts.priority ?? 'idle';
    this.leaves = opts.leaves;
  }

  /** Whether headers go to the thread (false once it failed, or after close). */
  get threaded(): boolean {
    return !this.broken && !this.closed;
  }

  /** The header of a sealed batch; `read` reads its actions when the thread does not. */
  async compute(request: HeaderRequest, read: ActionsReader): Promise<ComputedHeader> {
    const w = this.threaded ? this.thread() : null;
    if (!w) return computeHeader({ ...request, actions: await read() });
    // Read here when the thread has no database of its own.
    const input: HeaderInput | null = this.databaseUrl
      ? null
      : { ...request, actions: await read() };
    return new Promise((resolve, reject) => {
      const n = this.next++;
      this.pending.set(n, { resolve, reject, request, read });
      w.postMessage(input ? { n, input } : { n, request });
    });
  }

  /** The thread, started if it was not, as it reported itself; null when there is none. */
  threadInfo(): Promise<HeaderThreadInfo | null> {
    if (!this.threaded || !this.thread()) return Promise.resolve(null);
    return this.started;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    this.failOver();
    if (!w) return;
    // Let the thread end its database connection, then stop it whatever it answered.
    const ended = new Promise((resolve) => w.once('exit', resolve));
    w.postMessage({ close: true });
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS))]);
    await w.terminate();
  }

  private thread(): Worker | null {
    if (this.worker) return this.worker;
    try {
      const w = new Worker(new URL(HEADER_THREAD, import.meta.url), {
        workerData: { databaseUrl: this.databaseUrl ?? null, priority: this.priority },
      });
      this.started = new Promise((resolve) => (this.onStarted = resolve));
      type Message = {
        n: number;
        header?: ComputedHeader;
        leaves?: HeaderLeaves;
        error?: string;
      };
      w.on('message', (m: Message | { started: HeaderThreadInfo }) => {
        if ('started' in m) {
          this.logger.debug(m.started, 'the batch header thread started');
          if (m.started.priority !== this.priority) {
            this.logger.info(
              { wanted: this.priority, got: m.started.priority },
              'the batch header thread could not take the priority it was given',
            );
          }
          this.onStarted(m.started);
          return;
        }
        const p = this.pending.get(m.n);
        if (!p) return;
        this.pending.delete(m.n);
        if (m.header) {
          if (m.leaves) this.leaves?.keep(p.request.batch.id, m.leaves);
          p.resolve(m.header);
        } else p.reject(new Error(m.error ?? 'the header thread failed'));
      });
      w.on('error', (err) => {
        this.logger.error({ err }, 'the batch header thread failed; computing headers inline');
        this.broken = true;
        this.worker = null;
        this.failOver();
      });
      w.on('exit', () => {
        this.onStarted(null);
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

  /** Reads and computes inline what the thread still had. */
  private failOver(): void {
    for (const [n, p] of this.pending) {
      this.pending.delete(n);
      p.read()
        .then((actions) => computeHeader({ ...p.request, actions }))
        .then(p.resolve, p.reject);
    }
  }
}
