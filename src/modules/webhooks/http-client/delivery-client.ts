import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import {
  nonPublicName,
  refusedAddress,
  type AddressPolicy,
  type HostResolver,
} from './address-policy.js';
import { isGated, LookupAbandoned, LookupsBusy } from './lookup-gate.js';

/** Ten seconds to answer completely (docs/webhooks.md, "Answers, retries and statuses"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * An attempt that runs out of time is this process's doing, not the receiver's, when more than
 * this share of its time (6 of its 10 s) went to its host's lookup before the request was
 * sent: waiting for a lookup slot, and the lookup itself if it answered (docs/webhooks.md,
 * "Answers, retries and statuses"). A receiver's name servers alone cannot pass it, a lookup
 * giving up after 5 s (dns-resolver.ts): only this process's queue can.
 */
export const BUSY_LOOKUP_SHARE = 0.6;
/** What is read of an answer's body before it is dropped: nothing in it matters. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Receivers' URLs kept parsed (a webhook's URL is the same on every delivery). */
const MAX_TARGETS = 10_000;

export interface DeliveryClientOptions {
  policy: AddressPolicy;
  /**
   * Gated (gatedResolver), a lookup tells when it leaves the queue, so an attempt can tell the
   * time it waited for this process; a plain resolver's lookups run from the start.
   */
  resolve: HostResolver;
  /** An extra CA certificate (PEM) to trust besides the system's: tests only. */
  extraCa?: string | null;
  timeoutMs?: number;
  /** Connections kept per receiver origin. */
  connectionsPerOrigin?: number;
  /** Where a refused name's address goes (debug): the delivery log does not name it. */
  logger?: Pick<Logger, 'debug'>;
}

export interface PostResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /**
   * Not sent, or not answered in time, because this process was too busy, not because of the
   * receiver: its host lookup was refused by the lookup gate (LookupsBusy), or it ran out of
   * time after more than BUSY_LOOKUP_SHARE of it went to its host's lookup (lookupShare). The
   * attempt does not count (delivery-runner.ts).
   */
  busy?: true;
}

/** One lookup a new connection asked for (performance.now() times). */
interface HostLookup {
  asked: number;
  /** When it left the lookup gate's queue and ran; null while it waits. */
  started: number | null;
  /** When it settled; null while it waits or runs. */
  ended: number | null;
  /** It answered addresses. */
  answered: boolean;
}

/** An address the policy refused: the connection was never attempted. */
class RefusedAddress extends Error {
  readonly code = 'ONS_WEBHOOK_ADDRESS';
  /** Not for the address: the lookup gate refused it, or it still waited for a slot. */
  busy = false;
}

/** Whether `err` (or its cause) is a refusal for this process's own busy lookups. */
function refusedBusy(err: unknown): boolean {
  if (err instanceof RefusedAddress) return err.busy;
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof RefusedAddress && cause.busy;
}

/** Whether undici gave up on `err` for lack of time (connecting, the headers or the body). */
function timedOut(err: unknown): boolean {
  const e = err as { name?: string; code?: string };
  return (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  );
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The one way deliveries reach the outside (docs/architecture.md, "Choices of the stack"; SSRF):
 * undici with a `connect.lookup` that resolves the host and checks every address it answers
 * before the socket connects to one of them, so a name that resolved to a public address when
 * saved and to a private one now (DNS rebinding) never gets a connection. Redirects are never
 * followed (an answer is just its status). Keep-alive connections are reused per receiver.
 */
export class DeliveryClient {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly targets = new Map<string, { origin: string; path: string; host: string }>();
  /** Each host's lookups, kept until one attempt's time after they settle (lookupShare). */
  private readonly lookups = new Map<string, Set<HostLookup>>();

  constructor(private readonly opts: DeliveryClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    const gate = isGated(opts.resolve) ? opts.resolve : null;
    const lookup = (hostname: string, options: { all?: boolean }, cb: LookupCallback) => {
      // Kept for the attempts that wait for this connection (lookupShare).
      const asked = performance.now();
      const timing: HostLookup = {
        asked,
        started: gate ? null : asked,
        ended: null,
        answered: false,
      };
      this.track(hostname, timing);
      const settled = (answered: boolean) => {
        timing.ended = performance.now();
        timing.started ??= timing.ended;
        timing.answered = answered;
        setTimeout(() => this.untrack(hostname, timing), this.timeoutMs).unref();
      };
      // Not waited for past the delivery's own deadline (lookup-gate.ts).
      const signal = AbortSignal.timeout(this.timeoutMs);
      const started = () => {
        timing.started ??= performance.now();
      };
      (gate ? gate(hostname, signal, started) : opts.resolve(hostname, signal)).then(
        (addresses) => {
          settled(true);
          if (addresses.length === 0)
            return cb(new RefusedAddress(`${hostname} does not resolve`), '');
          for (const a of addresses) {
            const why = refusedAddress(a, opts.policy);
            if (why) {
              opts.logger?.debug(
                { host: hostname, address: a, range: why },
                'a webhook host resolves to a non-public address: not connected',
              );
              return cb(new RefusedAddress(`${nonPublicName(hostname)}; not connected`), '');
            }
          }
          const all = addresses.map((address) => ({ address, family: isIP(address) }));
          if (options.all) cb(null, all);
          else cb(null, all[0]!.address, all[0]!.family);
        },
        (err: unknown) => {
          settled(false);
          // Refused by the gate, or given up while it waited for a slot: this process was
          // busy, nothing is known of the name.
          if (err instanceof LookupsBusy || (err instanceof LookupAbandoned && !err.started)) {
            const busy = new RefusedAddress(`${hostname}: ${err.message}; not connected`);
            busy.busy = true;
            return cb(busy, '');
          }
          cb(new RefusedAddress(`${hostname} does not resolve`), '');
        },
      );
    };
    this.agent = new Agent({
      connections: opts.connectionsPerOrigin ?? 64,
      connect: {
        lookup,
        timeout: this.timeoutMs,
        // One context for every connection: built per connection from ~150 CA certificates,
        // it cost more than the request itself.
        ...(opts.extraCa
          ? { secureContext: createSecureContext({ ca: [...rootCertificates, opts.extraCa] }) }
          : {}),
      },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  /** POSTs `body`; never throws. A 2xx is a success, anything else carries an error text. */
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    let target: { origin: string; path: string; host: string };
    try {
      target = this.target(url);
    } catch {
      return Promise.resolve({
        statusCode: null,
        error: 'not delivered: a bad URL',
        durationMs: 0,
      });
    }
    // A literal address is never looked up, so it is checked here.
    if (isIP(target.host)) {
      const why = refusedAddress(target.host, this.opts.policy);
      if (why) {
        return Promise.resolve({
          statusCode: null,
          error: `${target.host} is ${why}; not connected`,
          durationMs: took(),
        });
      }
    }
    // undici's lowest level (dispatch) with a handler that keeps only the status and counts
    // the answer's bytes: no response stream per attempt, which `request` makes and a
    // delivery never reads (docs/performance.md, "Webhooks"). The whole attempt's deadline
    // is one timer, cleared when the attempt ends, and unref'd like AbortSignal.timeout's.
    return new Promise<PostResult>((resolve) => {
      let controller: { abort(reason: Error): void } | null = null;
      /** When the request was written on a connection. */
      let sentAt: number | null = null;
      let statusCode: number | null = null;
      let received = 0;
      let done = false;
      const finish = (result: Omit<PostResult, 'durationMs'>) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        resolve({ ...result, durationMs: took() });
      };
      const answered = () =>
        finish(
          statusCode === null
            ? { statusCode: null, error: 'not delivered: no answer' }
            : this.outcomeOf(statusCode),
        );
      // Out of time: the receiver's doing, unless most of the time before the request was
      // sent went to this process's lookups of the host (lookupShare).
      const late = () => {
        const lookupMs = this.lookupShare(target.host, started, sentAt ?? performance.now());
        if (lookupMs > this.timeoutMs * BUSY_LOOKUP_SHARE) {
          const s = (lookupMs / 1000).toFixed(1);
          finish({
            statusCode: null,
            error: `${target.host}: ${s} s of ${this.timeoutMs / 1000} s went to the host lookup`,
            busy: true,
          });
        } else {
          finish({ statusCode: null, error: this.late() });
        }
      };
      const deadline = setTimeout(() => {
        late();
        controller?.abort(new Error('deadline'));
      }, this.timeoutMs);
      deadline.unref();
      this.agent.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers, body },
        {
          onRequestStart: (c) => {
            controller = c;
            sentAt = performance.now();
            // The deadline passed while the attempt waited for a connection.
            if (done) c.abort(new Error('deadline'));
          },
          onResponseStart: (_c, code) => {
            statusCode = code;
          },
          onResponseData: (c, chunk: Buffer) => {
            received += chunk.length;
            // Nothing in an answer matters past this: the status stands, the rest is dropped
            // with the connection.
            if (received > MAX_ANSWER_BYTES) {
              answered();
              c.abort(new Error('answer too long'));
            }
          },
          onResponseEnd: answered,
          onResponseError: (_c, err: Error) => {
            if (timedOut(err)) return late();
            finish({
              statusCode: null,
              error: this.describe(err),
              ...(refusedBusy(err) ? { busy: true as const } : {}),
            });
          },
        },
      );
    });
  }

  private track(host: string, lookup: HostLookup): void {
    let set = this.lookups.get(host);
    if (!set) this.lookups.set(host, (set = new Set()));
    set.add(lookup);
  }

  private untrack(host: string, lookup: HostLookup): void {
    const set = this.lookups.get(host);
    set?.delete(lookup);
    if (set?.size === 0) this.lookups.delete(host);
  }

  /**
   * How much of [from, to] (an attempt's start, and when it was sent or now) went to lookups
   * of `host` for this process's reasons: waiting for a lookup slot, and the run of a lookup
   * that answered (the name works; its time went to getting the answer). A lookup that ran
   * and has not answered, or failed, is the name's own: only its wait counts. The most of any
   * one lookup: an attempt waits for one connection, whose lookup is not named to it.
   */
  private lookupShare(host: string, from: number, to: number): number {
    let most = 0;
    for (const l of this.lookups.get(host) ?? []) {
      const waitEnd = l.started ?? to;
      const end = l.answered && l.ended !== null ? l.ended : waitEnd;
      most = Math.max(most, Math.min(end, to) - Math.max(l.asked, from));
    }
    return most;
  }

  /** A receiver's URL as undici's dispatch takes it, parsed once per URL. */
  private target(url: string): { origin: string; path: string; host: string } {
    let t = this.targets.get(url);
    if (!t) {
      const u = new URL(url);
      t = {
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        host: u.hostname.replace(/^\[|\]$/g, ''),
      };
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(url, t);
    }
    return t;
  }

  private outcomeOf(code: number): Omit<PostResult, 'durationMs'> {
    if (code >= 200 && code < 300) return { statusCode: code, error: null };
    const error =
      code >= 300 && code < 400
        ? `answered ${code}; redirects are not followed`
        : `answered ${code}`;
    return { statusCode: code, error };
  }

  private late(): string {
    return `no complete answer within ${this.timeoutMs / 1000} s`;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private describe(err: unknown): string {
    const e = err as { name?: string; code?: string; message?: string; cause?: unknown };
    const cause = e.cause as { code?: string; message?: string } | undefined;
    if (err instanceof RefusedAddress) return err.message;
    if (cause?.code === 'ONS_WEBHOOK_ADDRESS') return cause.message ?? 'address refused';
    if (timedOut(err)) return this.late();
    const code = e.code ?? cause?.code;
    // Only the error's kind and the library's text: never a stack.
    return `not delivered: ${code ? `${code} ` : ''}${e.message ?? 'connection failed'}`.slice(
      0,
      300,
    );
  }
}
