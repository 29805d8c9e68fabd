import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { Code, invalid, unavailable, type ErrorCode } from '../lib/errors.js';
import type { App } from './types.js';

/** How long a client may take (config.ts `http`; README names the variables). */
export interface HttpTimeouts {
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/**
 * Node checks for requests past their time every `connectionsCheckingInterval` (30 s by
 * default), so a late request would live up to that much longer than its limit: checking
 * every second (or more often for shorter limits) keeps the cut close to the limit.
 */
function checkingIntervalMs(t: HttpTimeouts): number {
  return Math.max(50, Math.min(1000, Math.floor(t.headersTimeoutMs / 4)));
}

/** A request refused while shutting down may retry at once: another instance, or this one again. */
const SHUTDOWN_RETRY_SECONDS = 1;

function answer(
  socket: Socket,
  status: number,
  reason: string,
  message: string,
  code: ErrorCode = Code.INVALID_ARGUMENT,
) {
  const body = JSON.stringify({ code, message });
  socket.write(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Errors Node raises before a request reaches Fastify (a timeout, a malformed request):
 * answered in the API's error shape, then the connection is closed.
 */
function clientErrorHandler(
  this: { log: FastifyBaseLogger },
  err: NodeJS.ErrnoException,
  socket: Socket,
) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      answer(socket, 408, 'Request Timeout', 'the request did not arrive in time');
    } else if (err.code === 'HPE_HEADER_OVERFLOW') {
      answer(socket, 431, 'Request Header Fields Too Large', 'request headers are too large');
    } else {
      answer(socket, 400, 'Bad Request', 'malformed request');
    }
  }
  this.log.debug({ code: err.code }, 'client error; connection closed');
  socket.destroy();
}

/**
 * The requests Node answers itself, past every hook, answered in the API's error shape
 * instead (docs/api.md, "Answers and errors"), on the API's server and a worker's alike:
 *
 * - an HTTP/1.1 request without `Host` (Node: 400 with an empty body): refused by the hook
 *   registered here, RFC 9112 §3.2's 400 kept, Node's own check off (`requireHostHeader`
 *   below). Register it first, so it runs before the credential is read;
 * - an `Expect` other than `100-continue` (Node: 417 with no body);
 * - a `CONNECT` (Node: the connection closed without an answer, there being no tunnel here;
 *   the router answers any other method it has no route for 404 code 5);
 * - a request that arrives while the process shuts down, on a kept-alive connection (Fastify's
 *   `return503OnClosing` answers its own `{error, message, statusCode}`, so it is off in
 *   {@link serverOptions}): 503 code 14 with `Retry-After`, as any unavailable answer. Every
 *   answer sent while shutting down closes its connection, so the server can finish closing
 *   as soon as they are sent, and the client's next request goes to a new connection (another
 *   instance, behind a balancer).
 */
export function registerNodeRefusals(app: App): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (req, _reply, done) => {
    if (closing) {
      done(unavailable(SHUTDOWN_RETRY_SECONDS, 'the service is shutting down; retry'));
      return;
    }
    if (req.raw.httpVersion === '1.1' && req.headers.host === undefined) {
      const issue = { field: 'host', reason: 'is required' };
      done(invalid('an HTTP/1.1 request needs a Host header', [issue]));
      return;
    }
    done();
  });
  app.server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({
      code: Code.INVALID_ARGUMENT,
      message: 'the Expect header is not supported: only 100-continue is',
      details: { fields: [{ field: 'expect', reason: 'only 100-continue is supported' }] },
    });
    // Closed after: a body the client held back may still come.
    res.writeHead(417, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    res.end(body);
  });
  app.server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    if (socket.writable) answer(socket, 404, 'Not Found', 'no route CONNECT', Code.NOT_FOUND);
    socket.destroy();
  });
}

/**
 * Fastify's server options for the timeouts. Fastify disables Node's request timeout by
 * default, so a client that sends headers and then a body byte by byte (or not at all)
 * would hold its connection for ever.
 */
export function serverOptions(t: HttpTimeouts): FastifyServerOptions & {
  http: {
    headersTimeout: number;
    requestTimeout: number;
    connectionsCheckingInterval: number;
    requireHostHeader: boolean;
  };
} {
  return {
    requestTimeout: t.requestTimeoutMs,
    connectionTimeout: t.idleTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    // Fastify's own 503 is not in the API's error shape; registerNodeRefusals answers it.
    return503OnClosing: false,
    http: {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(t),
      // Node answers a missing Host with an empty 400; registerNodeRefusals answers it.
      requireHostHeader: false,
    },
    clientErrorHandler,
  };
}
