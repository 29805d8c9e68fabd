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
import { LookupAbandoned, LookupsBusy } from './lookup-gate.js';

/** Ten seconds to answer completely (docs/webhooks.md, "Answers, retries and statuses"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is read of an answer's body before it is dropped: nothing in it matters. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Receivers' URLs kept parsed (a webhook's URL is the same on every delivery). */
const MAX_TARGETS = 10_000;

export interface DeliveryClientOptions {
  policy: AddressPolicy;
  /** With `waitsForSlot` (gatedResolver), an attempt can tell when it waited for this process. */
  resolve: HostResolver & { waitsForSlot?: (hostname: string) => boolean };
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
   * Not sent because this process was too busy, not because of the receiver: its host lookup
   * was refused by the lookup gate (LookupsBusy), or still waited for a slot at the deadline.
   * The attempt does not count (delivery-runner.ts).
   */
  busy?: true;
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

  constructor(private readonly opts: DeliveryClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    const lookup = (hostname: string, options: { all?: boolean }, cb: LookupCallback) => {
      // Not waited for past the delivery's own deadline (lookup-gate.ts).
      opts.resolve(hostname, AbortSignal.timeout(this.timeoutMs)).then(
        (addresses) => {
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
      const deadline = setTimeout(() => {
        // No connection yet, and the lookup it needs still waits for a slot: this process's
        // lookups were busy (lookup-gate.ts), the receiver was never reached.
        if (controller === null && this.opts.resolve.waitsForSlot?.(target.host)) {
          finish({
            statusCode: null,
            error: `${target.host}: the host lookup waited for a slot; not connected`,
            busy: true,
          });
        } else {
          finish({ statusCode: null, error: this.late() });
        }
        controller?.abort(new Error('deadline'));
      }, this.timeoutMs);
      deadline.unref();
      this.agent.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers, body },
        {
          onRequestStart: (c) => {
            controller = c;
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
          onResponseError: (_c, err: Error) =>
            finish({
              statusCode: null,
              error: this.describe(err),
              ...(refusedBusy(err) ? { busy: true as const } : {}),
            }),
        },
      );
    });
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
    if (
      e.name === 'TimeoutError' ||
      e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
      e.code === 'UND_ERR_BODY_TIMEOUT' ||
      e.code === 'UND_ERR_CONNECT_TIMEOUT'
    ) {
      return this.late();
    }
    const code = e.code ?? cause?.code;
    // Only the error's kind and the library's text: never a stack.
    return `not delivered: ${code ? `${code} ` : ''}${e.message ?? 'connection failed'}`.slice(
      0,
      300,
    );
  }
}
