import { createHash } from 'node:crypto';
import pino, { type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino';

/** Query parameters whose values never reach a log line. */
const SECRET_QUERY = /^(token|code|secret|password|refresh_token|access_token|id_token|key)$/i;

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const k of [...params.keys()]) if (SECRET_QUERY.test(k)) params.set(k, '[Redacted]');
  return `${url.slice(0, q)}?${params.toString()}`;
}

/** Paths pino censors wherever they appear in a logged object. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'password',
  'token',
  'secret',
  '*.password',
  '*.token',
  '*.secret',
  '*.refresh_token',
  '*.access_token',
  '*.id_token',
  '*.signing_key',
  '*.api_key',
  '*.password_hash',
  // The anchoring key and RPC URL (which may carry a provider's key), should the config or
  // its `anchor` part ever be logged (src/config.ts's AnchorConfig).
  'privateKey',
  '*.privateKey',
  '*.*.privateKey',
  'rpcUrl',
  '*.rpcUrl',
  '*.*.rpcUrl',
  // SECRETS_KEY and SECRETS_KEY_PREVIOUS (src/config.ts's `secrets`), should the config be logged.
  'secrets',
  '*.secrets',
  // The log's signing seed (LOG_SIGNING_KEY, config.log.signingKey) and the object store's
  // secret (S3_SECRET_ACCESS_KEY, config.storage.s3.secretAccessKey), should the config or a
  // part of it be logged.
  'signingKey',
  '*.signingKey',
  '*.*.signingKey',
  'secretAccessKey',
  '*.secretAccessKey',
  '*.*.secretAccessKey',
  '*.*.*.secretAccessKey',
  // The trace collector's headers (OTEL_EXPORTER_OTLP_HEADERS), which may carry its key.
  'exporterHeaders',
  '*.exporterHeaders',
  '*.*.exporterHeaders',
  // DATABASE_URL, REDIS_URL and SMTP_URL, which carry their servers' passwords.
  'databaseUrl',
  '*.databaseUrl',
  'redisUrl',
  '*.redisUrl',
  'smtp.url',
  '*.smtp.url',
];

/**
 * A short name for a statement's text: its verb, its first table and a digest, e.g.
 * `insert wallets #3fa2c1d0`. The text itself is left out of the log: it is long, and a
 * reader who needs it finds it from the name.
 */
export function statementName(text: string): string {
  const verb = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toLowerCase() ?? 'query';
  const table = /\b(?:into|update|from)\s+"?([A-Za-z_]\w*)/i.exec(text)?.[1];
  const digest = createHash('sha1').update(text).digest('hex').slice(0, 8);
  return table ? `${verb} ${table} #${digest}` : `${verb} #${digest}`;
}

interface DatabaseFailure {
  statement: string | null;
  code: string | null;
}

/**
 * The statement and error code of a failed query, if `err` or one of its causes is one.
 * Drizzle's error carries the statement's parameters (password hashes, emails, tokens) in
 * its message and stack, and PostgreSQL's message and detail may quote the row's values, so
 * a failed query is logged by these two facts only.
 */
function databaseFailureOf(err: unknown): DatabaseFailure | null {
  let found = false;
  const out: DatabaseFailure = { statement: null, code: null };
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const c = e as Record<string, unknown>;
    if (typeof c.query === 'string' && 'params' in c) {
      found = true; // drizzle's DrizzleQueryError
      out.statement ??= statementName(c.query);
    }
    if (typeof c.statement === 'string') {
      found = true; // src/db/prepared.ts's named statements
      out.statement ??= c.statement;
    }
    if (typeof c.severity === 'string' && typeof c.code === 'string') {
      found = true; // node-postgres' DatabaseError: code is the SQLSTATE
      out.code ??= c.code;
    } else if (found && typeof c.code === 'string') {
      out.code ??= c.code; // a socket error under a failed query (ECONNRESET…)
    }
    e = c.cause;
  }
  return found ? out : null;
}

/** pino's error serializer, except that a failed query is told by statement and code only. */
export function serializeError(err: unknown): unknown {
  const db = databaseFailureOf(err);
  if (!db) return pino.stdSerializers.err(err as Error);
  const e = err as { name?: unknown; stack?: unknown };
  const frames =
    typeof e.stack === 'string'
      ? e.stack
          .split('\n')
          .filter((l) => /^\s+at /.test(l))
          .join('\n')
      : undefined;
  return {
    type: typeof e.name === 'string' ? e.name : 'Error',
    message: 'database query failed',
    statement: db.statement ?? 'unknown',
    code: db.code ?? 'unknown',
    stack: frames,
  };
}

export function createLogger(level: string, stream?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      serializers: {
        req: (req: { method: string; url: string; ip?: string; id?: string }) => ({
          method: req.method,
          url: redactUrl(req.url),
          ip: req.ip,
        }),
        err: serializeError,
      },
    },
    stream,
  );
}

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger (`req.log`) that makes its pino child, with the request id bound, only
 * when something is logged at a level that is on. Fastify's own factory makes the child for
 * every request, which runs the redaction set-up each time; at the default level almost no
 * request logs anything, so most never pay for it.
 */
class LazyRequestLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bindings));
  }

  private at(level: LevelName, args: LogArgs): void {
    if (this.made || this.parent.isLevelEnabled(level)) this.real[level](...args);
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: LogArgs) {
    this.at('fatal', args);
  }
  error(...args: LogArgs) {
    this.at('error', args);
  }
  warn(...args: LogArgs) {
    this.at('warn', args);
  }
  info(...args: LogArgs) {
    this.at('info', args);
  }
  debug(...args: LogArgs) {
    this.at('debug', args);
  }
  trace(...args: LogArgs) {
    this.at('trace', args);
  }
  silent() {}

  child(bindings: Record<string, unknown>, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a lazy child unless the route sets its own log options. */
export function requestLogger(
  parent: Logger,
  bindings: Record<string, unknown>,
  options: ChildLoggerOptions,
): Logger {
  if (Object.keys(options).length > 0) return parent.child(bindings, options);
  return new LazyRequestLogger(parent, bindings) as unknown as Logger;
}
