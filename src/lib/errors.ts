/** gRPC status codes used by the API (docs/api.md, "Answers and errors"). */
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

export type ErrorCode = (typeof Code)[keyof typeof Code];

export interface FieldIssue {
  field: string;
  reason: string;
}

/**
 * The one error type. Services throw it; the HTTP layer maps `code` to a status in one
 * place (src/http/errors.ts). `httpStatus` overrides the mapping where docs/api.md names
 * an exception (413 for an oversize body, 402 for an insufficient balance).
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const invalid = (message: string, fields?: FieldIssue[]) =>
  new AppError(Code.INVALID_ARGUMENT, message, fields ? { fields } : undefined);
export const notFound = (what: string) => new AppError(Code.NOT_FOUND, `${what} not found`);
export const conflict = (message: string) => new AppError(Code.ALREADY_EXISTS, message);
export const forbidden = (message: string) => new AppError(Code.PERMISSION_DENIED, message);
export const unauthenticated = (message: string) => new AppError(Code.UNAUTHENTICATED, message);
export const failedPrecondition = (message: string, httpStatus?: number) =>
  new AppError(Code.FAILED_PRECONDITION, message, undefined, httpStatus);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new AppError(Code.RESOURCE_EXHAUSTED, message, { retry_after_seconds: retryAfterSeconds });
/** A dependency (the database) does not answer; the caller should retry after a pause. */
export const unavailable = (
  retryAfterSeconds = 5,
  message = 'service temporarily unavailable; retry later',
) =>
  new AppError(Code.UNAVAILABLE, message, {
    retry_after_seconds: retryAfterSeconds,
  });
/**
 * PostgreSQL stopped the request's statement before it finished: it ran past its time limit
 * (an anonymous public read past PUBLIC_STATEMENT_TIMEOUT_MS, docs/self-hosting.md), or an
 * operator cancelled it. The same request may pass when the database is less busy; one that
 * asks for less (a narrower filter, a smaller page) more likely.
 */
export const statementCancelled = (retryAfterSeconds = 5) =>
  new AppError(
    Code.UNAVAILABLE,
    'the database stopped this request: it took longer than allowed; retry later, or ask for less (a narrower filter, a smaller page)',
    { retry_after_seconds: retryAfterSeconds },
  );
/**
 * The organization already has as many reports running as one organization may
 * (REPORTS_PER_ORGANIZATION, docs/self-hosting.md "Reports"), and none finished within
 * REPORTS_DB_WAIT_MS: its own reports wait for each other, never another organization's.
 */
export const reportsBusy = (retryAfterSeconds = 5) =>
  new AppError(
    Code.UNAVAILABLE,
    "this organization's other reports are still running; retry later",
    { retry_after_seconds: retryAfterSeconds },
  );
/**
 * A stored secret the request needs is sealed, and this process cannot open it: sealed after
 * its start by a process with SECRETS_KEY, or under a key it was not given (docs/self-hosting.md,
 * "Secrets at rest"). Its operator must restart it with the key; a process that has it serves
 * the request meanwhile.
 */
export const secretUnavailable = () =>
  new AppError(
    Code.UNAVAILABLE,
    'a stored secret this request needs is sealed under a key this server process cannot open (its operator must restart it with SECRETS_KEY); retry later',
    { retry_after_seconds: 60 },
  );
