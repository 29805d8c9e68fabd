import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseHead } from '../helpers/raw-http.js';
import { startTestService } from '../helpers/service.js';

/**
 * A request that reaches a process after its shutdown began, on a connection it kept alive,
 * is answered 503 code 14 in the flat error body with `Retry-After` and `Connection: close`
 * (docs/api.md, "Answers and errors"), not in Fastify's own `{error, message, statusCode}`.
 * The request is sent from a `preClose` hook of the test's: the process is closing, its
 * server still listening and the connection still open.
 */

/** One kept-alive connection: each `send` writes a request and reads its answer. */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  let waiting: (() => void) | null = null;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    data += d;
    waiting?.();
  });
  socket.on('close', () => waiting?.());
  socket.on('error', () => undefined);
  const answer = () => {
    const head = parseHead(data);
    if (!head) return null;
    const { status, headers, end } = head;
    const length = Number(headers['content-length'] ?? 0);
    if (data.length < end + 4 + length) return null;
    const body = data.slice(end + 4, end + 4 + length);
    data = data.slice(end + 4 + length);
    return { status, headers, body };
  };
  return {
    async send(path: string) {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
      const until = Date.now() + 5_000;
      for (;;) {
        const got = answer();
        if (got) return got;
        if (socket.destroyed || Date.now() > until) throw new Error(`no answer: ${data}`);
        await new Promise<void>((resolve) => {
          waiting = resolve;
          setTimeout(resolve, 100);
        });
      }
    },
    close: () => socket.destroy(),
  };
}

describe('a request that arrives while the process shuts down', () => {
  it('is answered 503 code 14 in the flat body, with Retry-After, and closes its connection', async () => {
    let probe: (() => Promise<void>) | null = null;
    const svc = await startTestService({
      extraRoutes: (app) => {
        app.addHook('preClose', async () => {
          if (probe) await probe();
        });
      },
    });
    await svc.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (svc.app.server.address() as net.AddressInfo).port;
    const conn = connection(port);
    try {
      const before = await conn.send('/healthz');
      expect(before.status).toBe(200);
      expect(before.headers.connection).toBe('keep-alive');

      let during: Awaited<ReturnType<typeof conn.send>> | null = null;
      probe = async () => {
        during = await conn.send('/healthz');
      };
      await svc.stop();
      expect(during).not.toBeNull();
      const answer = during!;
      expect(answer.status, answer.body).toBe(503);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.headers.connection).toBe('close');
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      expect(JSON.parse(answer.body)).toEqual({
        code: 14,
        message: 'the service is shutting down; retry',
        details: { retry_after_seconds: 1 },
      });
    } finally {
      conn.close();
    }
  });
});
