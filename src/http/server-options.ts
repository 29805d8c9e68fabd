import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { Code } from '../lib/errors.js';

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

function answer(socket: Socket, status: number, reason: string, message: string) {
  const body = JSON.stringify({ code: Code.INVALID_ARGUMENT, message });
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
 * Fastify's server options for the timeouts. Fastify disables Node's request timeout by
 * default, so a client that sends headers and then a body byte by byte (or not at all)
 * would hold its connection for ever.
 */
export function serverOptions(t: HttpTimeouts): FastifyServerOptions & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  return {
    requestTimeout: t.requestTimeoutMs,
    connectionTimeout: t.idleTimeoutMs,
    keepAliveTimeout: t.keepAliveTimeoutMs,
    http: {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: t.requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(t),
    },
    clientErrorHandler,
  };
}
