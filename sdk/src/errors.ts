/**
 * The service's error codes: gRPC status numbers (the `code` of every error body).
 * HTTP status: 3 → 400 (413 for a body over the limit), 5 → 404, 6 → 409, 7 → 403, 8 → 429,
 * 9 → 400 (402 for an insufficient balance), 10 → 409, 13 → 500, 14 → 503, 16 → 401.
 */
export const Code = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** `details` of an error; for a refused input it names the fields and why. */
export interface OnsErrorDetails {
  fields?: { field: string; reason: string }[];
  [key: string]: unknown;
}

export interface OnsErrorInit {
  code: number;
  message: string;
  details?: OnsErrorDetails | undefined;
  /** The HTTP status; 0 when no answer came (the service could not be reached). */
  status: number;
  requestId?: string | null;
  /** For a 429 (or 503): the seconds the service asked to wait (`Retry-After`). */
  retryAfterSeconds?: number | null;
  cause?: unknown;
}

/**
 * Every refusal or failure of a call: the service's flat error body `{code, message,
 * details?}`, the HTTP status and the `X-Request-Id` of the answer (quote it when asking
 * the operator about a call). A call that got no answer at all is status 0, code 14.
 */
export class OnsError extends Error {
  override readonly name = 'OnsError';
  readonly code: number;
  readonly details: OnsErrorDetails | undefined;
  readonly status: number;
  readonly requestId: string | null;
  readonly retryAfterSeconds: number | null;

  constructor(init: OnsErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.details = init.details;
    this.status = init.status;
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }

  /** The error of an answer, from its status, headers and body (parsed JSON or text). */
  static fromAnswer(response: Response, body: unknown): OnsError {
    const flat = isErrorBody(body) ? body : null;
    return new OnsError({
      code: flat?.code ?? codeOfStatus(response.status),
      message: flat?.message ?? messageOf(response, body),
      details: flat?.details,
      status: response.status,
      requestId: response.headers.get('x-request-id'),
      retryAfterSeconds: retryAfterSeconds(response.headers.get('retry-after')),
    });
  }

  /** The error of a call that got no answer (connection refused, reset, DNS). */
  static unreachable(cause: unknown): OnsError {
    const why = cause instanceof Error ? cause.message : String(cause);
    return new OnsError({
      code: Code.UNAVAILABLE,
      message: `the service could not be reached: ${why}`,
      status: 0,
      cause,
    });
  }
}

export function isOnsError(err: unknown): err is OnsError {
  return err instanceof OnsError;
}

function isErrorBody(
  body: unknown,
): body is { code: number; message: string; details?: OnsErrorDetails } {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return (
    Number.isInteger(b.code) &&
    typeof b.message === 'string' &&
    (b.details === undefined || (typeof b.details === 'object' && b.details !== null))
  );
}

/** For an answer that is not the service's error body (a proxy's page, an empty body). */
function codeOfStatus(status: number): number {
  if (status === 401) return Code.UNAUTHENTICATED;
  if (status === 403) return Code.PERMISSION_DENIED;
  if (status === 404) return Code.NOT_FOUND;
  if (status === 409) return Code.ALREADY_EXISTS;
  if (status === 429) return Code.RESOURCE_EXHAUSTED;
  if (status === 502 || status === 503 || status === 504) return Code.UNAVAILABLE;
  if (status >= 500) return Code.INTERNAL;
  return Code.INVALID_ARGUMENT;
}

function messageOf(response: Response, body: unknown): string {
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return `HTTP ${response.status}${text ? `: ${text}` : ''}`;
}

/** `Retry-After` in seconds: a number of seconds or an HTTP date; null when absent or bad. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
