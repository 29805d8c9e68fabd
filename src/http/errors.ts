import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  Code,
  invalid,
  secretUnavailable,
  statementCancelled,
  unavailable,
  type ErrorCode,
  type FieldIssue,
} from '../lib/errors.js';
import { ID_PREFIXES, idKindOfPattern } from '../lib/ids.js';
import { toWellFormed } from '../lib/input-check.js';
import { isDatabaseUnavailable, isQueryCanceled } from '../lib/pg-errors.js';
import { linkUrlReason } from '../lib/link-url.js';
import { SealedSecretError } from '../lib/sealed-secret.js';

/** gRPC code → HTTP status, in one place (docs/api.md, "Answers and errors"). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  [Code.INVALID_ARGUMENT]: 400,
  [Code.NOT_FOUND]: 404,
  [Code.ALREADY_EXISTS]: 409,
  [Code.PERMISSION_DENIED]: 403,
  [Code.RESOURCE_EXHAUSTED]: 429,
  [Code.FAILED_PRECONDITION]: 400,
  [Code.ABORTED]: 409,
  [Code.INTERNAL]: 500,
  [Code.UNAVAILABLE]: 503,
  [Code.UNAUTHENTICATED]: 401,
};

export interface ErrorBody {
  code: number;
  message: string;
  details?: Record<string, unknown>;
}

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(issue: AjvIssue, context: string | undefined): string {
  const base = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const extra =
    (issue.params?.missingProperty as string | undefined) ??
    (issue.params?.additionalProperty as string | undefined);
  const path = [base, extra].filter(Boolean).join('.');
  return path || context || 'body';
}

function reasonOf(issue: AjvIssue): string {
  if (issue.keyword === 'additionalProperties') return 'unknown field';
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'pattern') {
    const kind = idKindOfPattern(String(issue.params?.pattern));
    if (kind) return `is not a well-formed id (${ID_PREFIXES[kind]}_ then 26 characters)`;
    const link = linkUrlReason(issue.params?.pattern);
    if (link) return link;
  }
  return issue.message ?? 'is invalid';
}

/** Schema failures → 400 code 3 with `details.fields` naming each field and why. */
export function validationError(issues: AjvIssue[], context?: string): AppError {
  const fields: FieldIssue[] = issues.map((i) => ({
    field: fieldOf(i, context),
    reason: reasonOf(i),
  }));
  const first = fields[0];
  const where = context ? `${context} ` : '';
  const message = first
    ? `invalid ${where}field ${first.field}: ${first.reason}`
    : 'invalid request';
  return new AppError(Code.INVALID_ARGUMENT, message, { fields });
}

/**
 * Fastify's own client errors (parsing, size, media type) as AppErrors, and client errors
 * that carry only a status: http-errors, as the static files' sender (@fastify/send, for
 * /console and /docs) throws for a range it cannot serve (416) or a condition that does not
 * hold (If-Match, If-Unmodified-Since: 412).
 */
function fromFastify(err: FastifyError): AppError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
      return new AppError(Code.INVALID_ARGUMENT, 'request body is too large', undefined, 413);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(Code.INVALID_ARGUMENT, 'unsupported content type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(Code.INVALID_ARGUMENT, 'request body is empty but declared as JSON');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError(Code.INVALID_ARGUMENT, 'request body is not valid JSON');
    // The router's own refusals: it cannot say which parameter was at fault, so the field
    // is the path.
    case 'FST_ERR_BAD_URL':
      return invalid('the path is not valid percent-encoded UTF-8', [
        { field: 'path', reason: 'is not valid percent-encoded UTF-8' },
      ]);
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return invalid('a path parameter is too long', [
        { field: 'path', reason: 'has a parameter that is too long' },
      ]);
    default:
      break;
  }
  if (err instanceof SyntaxError || err.statusCode === 400) {
    return new AppError(Code.INVALID_ARGUMENT, 'malformed request');
  }
  if (err.statusCode === 413) {
    return new AppError(Code.INVALID_ARGUMENT, 'request body is too large', undefined, 413);
  }
  if (err.statusCode === 404) return new AppError(Code.NOT_FOUND, 'not found');
  if (err.statusCode === 412) {
    const message = 'a precondition of the request does not hold';
    return new AppError(Code.FAILED_PRECONDITION, message, undefined, 412);
  }
  if (err.statusCode === 416) {
    const message = 'the requested range cannot be served';
    return new AppError(Code.INVALID_ARGUMENT, message, undefined, 416);
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError(Code.INVALID_ARGUMENT, 'bad request');
  }
  return null;
}

export function toAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  // Never a 500: nothing is wrong with the request or the code, the process lacks a key.
  if (err instanceof SealedSecretError) return secretUnavailable();
  const fe = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(fe.validation)) return validationError(fe.validation, fe.validationContext);
  // A client's own broken connection carries a statusCode (Fastify sets 400) and stays a 400.
  if (fe?.statusCode === undefined && isDatabaseUnavailable(err)) return unavailable();
  // A statement past its statement_timeout (the public reads' pool, src/db/pool.ts).
  if (fe?.statusCode === undefined && isQueryCanceled(err)) return statementCancelled();
  if (
    fe &&
    typeof fe === 'object' &&
    (typeof fe.code === 'string' || typeof fe.statusCode === 'number')
  ) {
    return fromFastify(fe);
  }
  if (err instanceof SyntaxError) return new AppError(Code.INVALID_ARGUMENT, 'malformed request');
  return null;
}

/**
 * An error body's text made well-formed, keys and nested values included: a message or a
 * field may echo the caller's text cut short (a field name, a pattern in an engine's message),
 * and a cut through a surrogate pair leaves half of it, which a strict JSON reader refuses.
 * Details are the service's own and small; the depth bound is a guard, not a limit met.
 */
function wellFormedText(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return toWellFormed(value);
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => wellFormedText(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [toWellFormed(k), wellFormedText(v, depth + 1)]),
  );
}

export function errorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  const app = toAppError(err);
  if (!app) {
    // The real error goes to the log only; the client learns nothing internal.
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send({ code: Code.INTERNAL, message: 'internal error' });
  }
  const status = app.httpStatus ?? HTTP_STATUS[app.code];
  if (err instanceof SealedSecretError) {
    // The operator's to fix: the message names the place, the key id and the setting, never
    // a secret.
    req.log.error({ reason: err.message }, 'a stored secret does not open in this process');
  } else if (status === 503) {
    // An outage of the database, or a statement it stopped as too slow, is no defect of the
    // service: a warning, not an error.
    const what = isQueryCanceled(err) ? 'statement cancelled: past its time limit' : null;
    req.log.warn({ err }, what ?? 'dependency unavailable');
  } else if (status >= 500) req.log.error({ err }, 'server error');
  if (app.code === Code.RESOURCE_EXHAUSTED || app.code === Code.UNAVAILABLE) {
    const retry = app.details?.retry_after_seconds;
    if (typeof retry === 'number') void reply.header('retry-after', String(Math.ceil(retry)));
  }
  const body: ErrorBody = { code: app.code, message: toWellFormed(app.message) };
  if (app.details) body.details = wellFormedText(app.details) as Record<string, unknown>;
  return reply.status(status).send(body);
}
