import { OnsError, retryAfterSeconds } from './errors.js';

/** The two tokens of a signed-in session, as every sign-in answer gives them. */
export interface Session {
  access_token: string;
  refresh_token: string;
}

/**
 * When the client sends a call again (sdk/README.md, "Retries"): after a `429`, a network
 * failure, a `502`, `503` or `504`, and (a keyed create only) a `409` code 10, for calls the
 * service answers idempotently.
 */
export interface RetryOptions {
  /** Retries after the first attempt; 0 turns retrying off. Default 2. */
  retries?: number;
  /** A wait longer than this (a `Retry-After`, say) is not waited for: the answer surfaces. Default 10 000. */
  maxDelayMs?: number;
  /**
   * The wait when a 429 carries no usable `Retry-After`, and the first wait after a failure
   * (doubled after each). Default 1 000.
   */
  defaultDelayMs?: number;
  /**
   * Retry every POST and PATCH too. Off by default: GET, HEAD, OPTIONS, PUT and DELETE are
   * retried, and so are the POSTs the service answers idempotently (a signed action, a create
   * sent with an `Idempotency-Key`); any other write only when the caller says it may be.
   */
  nonIdempotent?: boolean;
  /**
   * Send an `Idempotency-Key` with every POST: one key per call (a fresh UUID unless the
   * call sets the header itself), the same on each of its retries, so a retried create is
   * answered by the service with its first answer instead of creating twice. Default true.
   */
  idempotencyKeys?: boolean;
}

export type FetchFn = (request: Request) => Promise<Response>;

export interface TransportOptions {
  baseUrl: string;
  fetch?: FetchFn;
  apiKey?: string | undefined;
  session?: Session | null | undefined;
  /**
   * Called with the new tokens after every refresh (store them: the old refresh token is
   * spent), and with null when the service refused the refresh (the session is over).
   */
  onSession?: ((session: Session | null) => void) | undefined;
  retry?: RetryOptions | false | undefined;
  /** For tests: how to wait. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * POSTs whose retry gets the first answer, not a second effect (docs/api.md, "Idempotent
 * requests"): a signed action is its own key; a create is safe with an `Idempotency-Key`.
 */
export const SIGNED_ACTION_POSTS: readonly string[] = [
  '/ebus/execute',
  '/ebus/actions',
  '/ebus/actions/batch',
  '/objects',
];
export const KEYED_POSTS: readonly string[] = [
  '/api-keys',
  '/organizations',
  '/organizations/{organizationId}/members',
  '/storage/upload',
  '/support',
  '/templates',
  '/webhooks',
];
const KEYED = KEYED_POSTS.map((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`));

/** Gateway answers that say nothing about the call: it may not have reached the service. */
const GATEWAY = new Set([502, 503, 504]);
export const REFRESH_PATH = '/auth/refresh-token';
/** The header the service keys idempotent creates by (docs/api.md, "Idempotent requests"). */
export const IDEMPOTENCY_KEY = 'idempotency-key';

/**
 * A random UUID v4. `crypto.randomUUID` exists only in secure contexts in browsers (a console
 * served over plain http has none); `getRandomValues` exists everywhere.
 */
function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const sleepFor = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Sends every call of one client: puts the credential on it, refreshes an expired access
 * token once (one refresh shared by every call that needs it) and waits out `429`s.
 */
export class Transport {
  private readonly baseUrl: string;
  private readonly send: FetchFn;
  private readonly retry: Required<RetryOptions>;
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private apiKey: string | null;
  private tokens: Session | null;
  private onSession: ((session: Session | null) => void) | undefined;
  /** The refresh under way, if any: every call that meets a 401 meanwhile waits for it. */
  private refreshing: Promise<void> | null = null;

  constructor(opts: TransportOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    const f = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
    this.send = f;
    const r = opts.retry === false ? { retries: 0 } : (opts.retry ?? {});
    this.retry = {
      retries: r.retries ?? 2,
      maxDelayMs: r.maxDelayMs ?? 10_000,
      defaultDelayMs: r.defaultDelayMs ?? 1_000,
      nonIdempotent: r.nonIdempotent ?? false,
      idempotencyKeys: r.idempotencyKeys ?? true,
    };
    this.sleep = opts.sleep ?? sleepFor;
    this.apiKey = opts.apiKey ?? null;
    this.tokens = opts.session ? pick(opts.session) : null;
    this.onSession = opts.onSession;
    if (this.apiKey !== null && this.tokens !== null) {
      throw new Error('give either an API key or a session, not both');
    }
  }

  get session(): Session | null {
    return this.tokens;
  }

  /** Signs the client in with a session (any sign-in answer), or signs it out (null). */
  setSession(session: Session | null) {
    this.tokens = session ? pick(session) : null;
    if (session) this.apiKey = null;
  }

  setApiKey(key: string | null) {
    this.apiKey = key;
    if (key !== null) this.tokens = null;
  }

  setOnSession(listener: ((session: Session | null) => void) | undefined) {
    this.onSession = listener;
  }

  /** The `fetch` openapi-fetch calls. */
  readonly fetch = async (request: Request): Promise<Response> => {
    // Read once, so each attempt can send the same bytes.
    const body = request.body === null ? null : await request.arrayBuffer();
    const method = request.method.toUpperCase();
    const ownCredential = request.headers.has('authorization') || request.headers.has('x-api-key');
    // One key per call, sent on the first attempt and every retry of it.
    const idempotencyKey =
      method === 'POST' && this.retry.idempotencyKeys && !request.headers.has(IDEMPOTENCY_KEY)
        ? newIdempotencyKey()
        : null;
    const path = method === 'POST' ? this.pathOf(request.url) : null;
    const keyed =
      path !== null &&
      KEYED.some((r) => r.test(path)) &&
      (idempotencyKey !== null || request.headers.has(IDEMPOTENCY_KEY));
    const mayRetry =
      this.retry.nonIdempotent ||
      IDEMPOTENT.has(method) ||
      keyed ||
      (path !== null && SIGNED_ACTION_POSTS.includes(path));
    let refreshed = false;
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(request.headers);
      if (idempotencyKey !== null) headers.set(IDEMPOTENCY_KEY, idempotencyKey);
      const usedToken = ownCredential ? null : this.authorize(headers);
      let response: Response;
      try {
        response = await this.send(
          new Request(request.url, {
            method,
            headers,
            body,
            signal: request.signal,
            redirect: request.redirect,
          }),
        );
      } catch (err) {
        if (isAbort(err)) throw err;
        // Sent or not, a call that is safe to repeat is sent again.
        const delay = this.backoff(attempt);
        if (mayRetry && attempt < this.retry.retries && delay <= this.retry.maxDelayMs) {
          await this.sleep(delay, request.signal);
          continue;
        }
        throw OnsError.unreachable(err);
      }
      if (
        response.status === 401 &&
        usedToken !== null &&
        !refreshed &&
        !isRefreshCall(request.url, this.baseUrl)
      ) {
        refreshed = true;
        if (await this.refreshAfter(usedToken)) {
          await response.body?.cancel();
          continue;
        }
        return response;
      }
      if (mayRetry && attempt < this.retry.retries) {
        const delay = await this.retryDelay(response, attempt, keyed);
        if (delay !== null && delay <= this.retry.maxDelayMs) {
          await response.body?.cancel();
          await this.sleep(delay, request.signal);
          continue;
        }
      }
      return response;
    }
  };

  /**
   * How long to wait before sending a call again after this answer; null: it is the answer.
   * A 429 waits its `Retry-After`; a gateway's failure and a keyed create still running on
   * the service (409 code 10) wait the backoff.
   */
  private async retryDelay(
    response: Response,
    attempt: number,
    keyed: boolean,
  ): Promise<number | null> {
    const backoff = this.backoff(attempt);
    if (response.status === 429) {
      const after = retryAfterSeconds(response.headers.get('retry-after'));
      return after === null ? this.retry.defaultDelayMs : after * 1000;
    }
    if (GATEWAY.has(response.status)) {
      const after = retryAfterSeconds(response.headers.get('retry-after'));
      return after === null ? backoff : after * 1000;
    }
    if (response.status === 409 && keyed) {
      const body = (await response
        .clone()
        .json()
        .catch(() => null)) as { code?: unknown } | null;
      return body?.code === 10 ? backoff : null;
    }
    return null;
  }

  /** The wait after a failure: defaultDelayMs, then twice as long each time. */
  private backoff(attempt: number): number {
    return this.retry.defaultDelayMs * 2 ** attempt;
  }

  /** The path of a call's URL under the client's base URL (null when it is elsewhere). */
  private pathOf(url: string): string | null {
    const bare = url.split(/[?#]/)[0]!;
    return bare.startsWith(this.baseUrl) ? bare.slice(this.baseUrl.length) || '/' : null;
  }

  /** Puts the credential on a call; answers the access token it used, if a session's. */
  private authorize(headers: Headers): string | null {
    if (this.apiKey !== null) {
      headers.set('x-api-key', this.apiKey);
      return null;
    }
    if (this.tokens === null) return null;
    headers.set('authorization', `Bearer ${this.tokens.access_token}`);
    return this.tokens.access_token;
  }

  /**
   * After a 401 answered a call made with `usedToken`: true when there is a newer access
   * token to try. A call whose token was already replaced just tries the new one; otherwise
   * the first such call refreshes and the others wait for that same refresh.
   */
  private async refreshAfter(usedToken: string): Promise<boolean> {
    if (this.tokens === null) return false;
    if (this.tokens.access_token !== usedToken) return true;
    this.refreshing ??= this.refresh(this.tokens).finally(() => {
      this.refreshing = null;
    });
    await this.refreshing;
    return this.tokens !== null && this.tokens.access_token !== usedToken;
  }

  private async refresh(current: Session): Promise<void> {
    let response: Response;
    try {
      response = await this.send(
        new Request(`${this.baseUrl}${REFRESH_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ refresh_token: current.refresh_token }),
        }),
      );
    } catch {
      return; // unreachable: the call's own 401 surfaces; the session may still be good
    }
    if (this.tokens !== current) {
      await response.body?.cancel();
      return; // signed in or out meanwhile: that wins
    }
    if (response.ok) {
      const next = (await response.json()) as Session;
      this.tokens = pick(next);
      this.onSession?.(this.tokens);
    } else if (response.status === 401) {
      await response.body?.cancel();
      this.tokens = null;
      this.onSession?.(null);
    } else {
      await response.body?.cancel(); // 429, 5xx: not the session's fault; keep it
    }
  }
}

function pick(s: Session): Session {
  return { access_token: s.access_token, refresh_token: s.refresh_token };
}

function isRefreshCall(url: string, baseUrl: string): boolean {
  return url.split('?')[0] === `${baseUrl}${REFRESH_PATH}`;
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
