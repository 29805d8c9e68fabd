import pg from 'pg';
import type { Logger } from 'pino';

/** The application_name of the listening connection (createListener's; pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = 'ons-listen';

export interface ListenerOptions {
  connectionString: string;
  /**
   * The channels, each a plain lower-case SQL identifier (it is written into `LISTEN` as is),
   * with what a notification on it does (given its payload). Notifications arrive in the order
   * PostgreSQL delivers them, every channel's in one sequence.
   */
  channels: Readonly<Record<string, (payload: string) => void>>;
  /**
   * Notices may have been missed, on every channel: called when the connection is lost, at
   * every attempt to listen again, and once listening (again) before any notice counts.
   */
  onGap(): void;
  logger: Logger;
  /** The first wait before listening again after a loss (ms; doubled per failed attempt). */
  retryMinMs?: number;
  /** The longest wait between attempts (ms): while not listening, `onGap` runs this often. */
  retryMaxMs?: number;
  /** How often the idle connection is checked with `SELECT 1` (ms). */
  heartbeatMs?: number;
  /** How long the connect, the LISTEN and each check may take before the connection is dropped. */
  timeoutMs?: number;
}

const DEFAULTS = { retryMinMs: 100, retryMaxMs: 4_000, heartbeatMs: 5_000, timeoutMs: 3_000 };

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** What /metrics shows of a listener (src/revocations.ts registers it). */
export interface ListenerState {
  /** Listening now. */
  readonly listening: boolean;
  /** How many times it started listening: 1 after the start, one more per reconnection. */
  readonly listens: number;
}

/**
 * One connection of its own (not a pool's) that LISTENs on every channel given (one
 * connection however many) and hands each notification to its channel's function.
 * PostgreSQL delivers a notification only to connections that listened before it was sent,
 * so any time the connection is not listening is a gap, on every channel at once: it is
 * reported to `onGap` when the connection errs or ends (a restart, a failover,
 * `pg_terminate_backend`), at every attempt to listen again (after `retryMinMs`, doubling up
 * to `retryMaxMs`, with jitter), and once the LISTEN has taken effect, before the first
 * notice it may have missed could be acted on. A connection that goes silent (no error, no
 * answer) is caught by the heartbeat within `heartbeatMs` + `timeoutMs`. Nothing here runs
 * per request: the cost is one idle connection and a `SELECT 1` every `heartbeatMs`.
 */
export class ChannelListener implements ListenerState {
  private readonly o: Required<Omit<ListenerOptions, 'channels' | 'onGap' | 'logger'>>;
  private readonly handlers: ReadonlyMap<string, (payload: string) => void>;
  /** `LISTEN a; LISTEN b`: every channel in one round trip. */
  private readonly listen: string;
  private client: pg.Client | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private failures = 0;
  private stopped = false;
  private outageLogged = false;
  listening = false;
  listens = 0;

  constructor(private readonly opts: ListenerOptions) {
    const channels = Object.keys(opts.channels);
    if (channels.length === 0) throw new Error('a listener needs a channel');
    for (const c of channels) if (!IDENTIFIER.test(c)) throw new Error(`not a channel name: ${c}`);
    this.handlers = new Map(Object.entries(opts.channels));
    this.listen = channels.map((c) => `LISTEN ${c}`).join('; ');
    this.o = {
      connectionString: opts.connectionString,
      retryMinMs: opts.retryMinMs ?? DEFAULTS.retryMinMs,
      retryMaxMs: opts.retryMaxMs ?? DEFAULTS.retryMaxMs,
      heartbeatMs: opts.heartbeatMs ?? DEFAULTS.heartbeatMs,
      timeoutMs: opts.timeoutMs ?? DEFAULTS.timeoutMs,
    };
  }

  /** The first attempt to listen; when it fails, the next ones run in the background. */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Stops listening for good (the process stops): no more attempts, the connection closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const client = this.client;
    this.client = null;
    if (client) await closeWithin(client, this.o.timeoutMs);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.o.connectionString,
      application_name: LISTEN_APPLICATION_NAME,
      connectionTimeoutMillis: this.o.timeoutMs,
      query_timeout: this.o.timeoutMs,
      keepAlive: true,
    });
    this.client = client;
    let gone = false;
    const lose = (err: unknown) => {
      if (gone) return;
      gone = true;
      this.lost(client, err);
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('the listening connection ended')));
    client.on('notification', (msg) => {
      const handle = this.handlers.get(msg.channel);
      if (!gone && handle) handle(msg.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(this.listen);
    } catch (err) {
      lose(err);
      return;
    }
    if (gone || this.stopped) return;
    // From here on every notice arrives; what was sent before the LISTEN took effect is not
    // known, so it is all forgotten first.
    this.opts.onGap();
    this.listening = true;
    this.listens += 1;
    this.failures = 0;
    if (this.outageLogged) this.opts.logger.info('change notices: listening again');
    this.outageLogged = false;
    this.heartbeat = setInterval(() => {
      client.query('SELECT 1').catch(lose);
    }, this.o.heartbeatMs);
    this.heartbeat.unref();
  }

  private lost(client: pg.Client, err: unknown): void {
    if (this.client === client) this.client = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.listening = false;
    // A closed client may still report its socket's errors: they change nothing now.
    client.removeAllListeners('error');
    client.on('error', () => undefined);
    void closeWithin(client, this.o.timeoutMs);
    if (this.stopped) return;
    this.opts.onGap();
    if (!this.outageLogged) {
      // Once per outage, not once per attempt (PostgreSQL may be away for a while).
      this.outageLogged = true;
      this.opts.logger.warn(
        { err },
        'change notices: not listening; caches are emptied at each attempt until listening again',
      );
    }
    const base = Math.min(this.o.retryMaxMs, this.o.retryMinMs * 2 ** this.failures);
    this.failures += 1;
    // Processes that lost PostgreSQL together do not all come back in the same instant.
    const wait = base * (0.5 + Math.random() / 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.stopped) return;
      this.opts.onGap();
      void this.connect();
    }, wait);
    this.retryTimer.unref();
  }
}

/** Ends the connection, waiting at most `ms` (a dead peer never answers the goodbye). */
async function closeWithin(client: pg.Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
