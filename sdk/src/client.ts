import createClient, { defaultPathSerializer, type Client } from 'openapi-fetch';
import { ActionsApi } from './actions/api.js';
import { Code, OnsError } from './errors.js';
import type { paths } from './openapi.js';
import { Transport, type FetchFn, type RetryOptions, type Session } from './transport.js';
import type { Answer, OnsMethod } from './types.js';

export type { paths } from './openapi.js';

export interface OnsClientOptions {
  /** The service's address, e.g. `https://ons.example.com`. */
  baseUrl: string;
  /** Sign in with an API key (`onsk_…`), sent as `x-api-key`. */
  apiKey?: string;
  /** Or with a person's session: the tokens of any sign-in answer. */
  session?: Session;
  /**
   * Called with the new tokens after each refresh (the old refresh token is spent: store
   * the new one), and with null when the session is over (the refresh was refused).
   */
  onSession?: (session: Session | null) => void;
  /** `429` handling; `false` never retries. Defaults: see RetryOptions. */
  retry?: RetryOptions | false;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
  /** The organization actions are signed for; else the session's, or the API key's. */
  organizationId?: string;
  /** Another `fetch` (tests, proxies, instrumentation). */
  fetch?: FetchFn;
}

type RawCall = (
  path: string,
  init?: unknown,
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** What a file upload answers. */
export type FileRecord = Answer<'/storage/upload', 'post'>;

export interface UploadOptions {
  /** The file name the service records. Default: the File's own name, else `file`. */
  filename?: string;
  isPublic?: boolean;
}

/**
 * The path of a call with its parameters filled in, refusing a parameter that would make it
 * another path: each is percent-encoded, but `.` and `..` stay dot segments, which the URL
 * resolves (`/organizations/{organizationId}/invitation` with `..` is `/invitation`). A value
 * taken from a link or a form could otherwise send the call, with its credential, to a path
 * the caller never named. Refused with an OnsError, status 0 (no request is made), code 3.
 */
function pathOf(path: string, params: Record<string, unknown>): string {
  for (const [name, value] of Object.entries(params)) {
    if (value === '.' || value === '..') {
      throw new OnsError({
        code: Code.INVALID_ARGUMENT,
        message: `path parameter ${name} may not be "${value}"`,
        details: { fields: [{ field: name, reason: 'is a dot segment, not an id' }] },
        status: 0,
      });
    }
  }
  return defaultPathSerializer(path, params);
}

/**
 * A client of the service. Every route of its `/openapi.json` is a typed call:
 * `ons.GET('/templates/{id}', { params: { path: { id } } })` resolves to the answer or
 * throws an `OnsError`.
 */
export class OnsClient {
  readonly GET: OnsMethod<'get'>;
  readonly POST: OnsMethod<'post'>;
  readonly PUT: OnsMethod<'put'>;
  readonly PATCH: OnsMethod<'patch'>;
  readonly DELETE: OnsMethod<'delete'>;
  /**
   * The openapi-fetch client underneath, on the same credentials: it answers
   * `{data, error, response}` instead of throwing (for reading response headers).
   */
  readonly raw: Client<paths>;
  /** Build, sign and execute actions (docs/ebus.md). */
  readonly actions: ActionsApi;
  readonly baseUrl: string;
  private readonly transport: Transport;

  constructor(options: OnsClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      fetch: options.fetch,
      apiKey: options.apiKey,
      session: options.session,
      onSession: options.onSession,
      retry: options.retry,
    });
    this.raw = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: this.transport.fetch,
      pathSerializer: pathOf,
      ...(options.headers ? { headers: options.headers } : {}),
    });
    const method = (name: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') => {
      const call = this.raw[name] as unknown as RawCall;
      return (async (path: string, init?: unknown) => {
        // A call that got no answer throws an OnsError from the transport already.
        const answer = await call(path, init);
        if (!answer.response.ok) throw OnsError.fromAnswer(answer.response, answer.error);
        return answer.data;
      }) as never;
    };
    this.GET = method('GET');
    this.POST = method('POST');
    this.PUT = method('PUT');
    this.PATCH = method('PATCH');
    this.DELETE = method('DELETE');
    this.actions = new ActionsApi(this, { organizationId: options.organizationId });
  }

  /** The session's current tokens (they change on every refresh); null with an API key. */
  get session(): Session | null {
    return this.transport.session;
  }

  /**
   * Uses a session from now on: pass any answer that issues tokens (sign-in, switching
   * organization) as it came; null signs the client out (it then calls without credential).
   */
  setSession(session: Session | null): void {
    this.transport.setSession(session);
  }

  /** Uses an API key from now on (null: no credential). */
  setApiKey(key: string | null): void {
    this.transport.setApiKey(key);
  }

  /** `POST /storage/upload`: one file as multipart field `file`. */
  async upload(file: Blob, options: UploadOptions = {}): Promise<FileRecord> {
    const form = new FormData();
    const name = options.filename ?? (file instanceof File ? file.name : 'file');
    form.append('file', file, name);
    if (options.isPublic !== undefined) form.append('is_public', String(options.isPublic));
    // The route's description has no body (it reads the parts itself); openapi-fetch sends
    // a FormData as multipart.
    return this.POST('/storage/upload', { body: form as never });
  }
}

/** A client of the service at `options.baseUrl`. */
export function createOnsClient(options: OnsClientOptions): OnsClient {
  return new OnsClient(options);
}
