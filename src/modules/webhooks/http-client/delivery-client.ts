import type { LookupAddress } from 'node:dns';
import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import { refusedAddress, type AddressPolicy, type HostResolver } from './address-policy.js';

/** Ten seconds to answer completely (docs/webhooks.md, "Answers, retries and statuses"). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is read of an answer's body before it is dropped: nothing in it matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface DeliveryClientOptions {
  policy: AddressPolicy;
  resolve: HostResolver;
  /** An extra CA certificate (PEM) to trust besides the system's: tests only. */
  extraCa?: string | null;
  timeoutMs?: number;
  /** Connections kept per receiver origin. */
  connectionsPerOrigin?: number;
}

export interface PostResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** An address the policy refused: the connection was never attempted. */
class RefusedAddress extends Error {
  readonly code = 'ONS_WEBHOOK_ADDRESS';
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

  constructor(private readonly opts: DeliveryClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    const lookup = (hostname: string, options: { all?: boolean }, cb: LookupCallback) => {
      opts.resolve(hostname).then(
        (addresses) => {
          if (addresses.length === 0)
            return cb(new RefusedAddress(`${hostname} does not resolve`), '');
          for (const a of addresses) {
            const why = refusedAddress(a, opts.policy);
            if (why) {
              return cb(
                new RefusedAddress(`${hostname} resolves to ${a}, which is ${why}; not connected`),
                '',
              );
            }
          }
          const all = addresses.map((address) => ({ address, family: isIP(address) }));
          if (options.all) cb(null, all);
          else cb(null, all[0]!.address, all[0]!.family);
        },
        () => cb(new RefusedAddress(`${hostname} does not resolve`), ''),
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
  async post(url: string, headers: Record<string, string>, body: string): Promise<PostResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    // A literal address is never looked up, so it is checked here.
    if (isIP(host)) {
      const why = refusedAddress(host, this.opts.policy);
      if (why)
        return { statusCode: null, error: `${host} is ${why}; not connected`, durationMs: took() };
    }
    // The whole attempt's deadline: one timer, cleared when the answer is read. (undici takes
    // an emitter as its abort signal; an AbortSignal.timeout per attempt is not cleared and
    // its timer fired, made an exception and aborted a finished request, seconds later: about
    // a tenth of a delivery's cost. docs/performance.md, "Webhooks".)
    const abort = new EventEmitter();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      abort.emit('abort');
    }, this.timeoutMs);
    // Like AbortSignal.timeout's: it never keeps the process alive by itself.
    deadline.unref();
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: abort,
      });
      await res.body.dump({ limit: MAX_ANSWER_BYTES });
      if (timedOut) return { statusCode: null, error: this.late(), durationMs: took() };
      const code = res.statusCode;
      if (code >= 200 && code < 300) return { statusCode: code, error: null, durationMs: took() };
      const error =
        code >= 300 && code < 400
          ? `answered ${code}; redirects are not followed`
          : `answered ${code}`;
      return { statusCode: code, error, durationMs: took() };
    } catch (err) {
      return {
        statusCode: null,
        error: timedOut ? this.late() : this.describe(err),
        durationMs: took(),
      };
    } finally {
      clearTimeout(deadline);
    }
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
