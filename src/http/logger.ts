import pino, { type DestinationStream, type Logger } from 'pino';

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
];

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
        err: pino.stdSerializers.err,
      },
    },
    stream,
  );
}
