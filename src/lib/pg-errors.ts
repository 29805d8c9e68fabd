/** The PostgreSQL error under whatever wrapper the driver or Drizzle put around it. */
function pgErrorOf(err: unknown): { code?: string; constraint?: string } | null {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const candidate = e as { code?: unknown; constraint?: unknown; cause?: unknown };
    if (typeof candidate.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code)) {
      return {
        code: candidate.code,
        constraint: typeof candidate.constraint === 'string' ? candidate.constraint : undefined,
      };
    }
    e = candidate.cause;
  }
  return null;
}

/** True for a unique violation (23505), optionally of one named constraint or index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const pg = pgErrorOf(err);
  if (!pg || pg.code !== '23505') return false;
  return constraint === undefined || pg.constraint === constraint;
}

/**
 * True for a statement PostgreSQL cancelled (57014 query_canceled): it ran past its
 * `statement_timeout` (the public reads' pool sets one: src/db/pool.ts), or an operator
 * cancelled it. The request may succeed later, or asking for less: a 503, not a 500.
 */
export function isQueryCanceled(err: unknown): boolean {
  return pgErrorOf(err)?.code === '57014';
}

// SQLSTATEs that say the server is gone or not taking work: connection exceptions (class 08),
// shutdown and start-up (57P01–57P03), no free connection slot (53300).
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
// Socket errors of the connection to the database.
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// node-postgres reports a lost or unreachable server with these messages and no code.
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/**
 * True when the database did not answer (refused, lost, starting, shutting down), as opposed
 * to answering with an error: the request may succeed later, so it is a 503, not a 500.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen: unknown[] = [err];
  for (let i = 0; i < seen.length && i < 8; i++) {
    const e = seen[i];
    if (!e || typeof e !== 'object') continue;
    const c = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof c.code === 'string') {
      if (UNAVAILABLE_SQLSTATE.test(c.code) || UNAVAILABLE_ERRNO.has(c.code)) return true;
    }
    if (typeof c.message === 'string' && UNAVAILABLE_MESSAGE.test(c.message)) return true;
    if (c.cause !== undefined) seen.push(c.cause);
    // A connection to a name with several addresses fails with an AggregateError.
    if (Array.isArray(c.errors)) seen.push(...(c.errors as unknown[]).slice(0, 4));
  }
  return false;
}
