import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { exchange as exchangeWith, type RawAnswer } from '../helpers/raw-http.js';

/**
 * Requests that Node itself answers, or would, before Fastify's hooks and error handler see
 * them: over a real socket (app.inject always sends a Host and never an Expect or a CONNECT).
 * Each gets a 4xx in the flat `{code, message, details?}` body (docs/api.md, "Answers and
 * errors"), never an empty one or none at all.
 */
const svc = useTestService();
let port: number;
let member: TestMember;

beforeAll(async () => {
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  port = (svc.app.server.address() as net.AddressInfo).port;
  member = await createMember(svc);
});

function expectFlatError(answer: RawAnswer, status: number, code: number) {
  const seen = `${answer.status} ${JSON.stringify(answer.headers)} ${answer.body}`;
  expect(answer.status, seen).toBe(status);
  expect(answer.headers['content-type'], seen).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(
    Object.keys(body).every((k) => ['code', 'message', 'details'].includes(k)),
    seen,
  ).toBe(true);
  expect(body.code, seen).toBe(code);
  expect(typeof body.message, seen).toBe('string');
  return body;
}

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
const exchange = (text: string) => exchangeWith(port, text);

describe('requests Node answers before the routes', () => {
  // [what, status, code, request]: the first five Node answered with no body, or not at all.
  const refused: [string, number, number, string][] = [
    ['an HTTP/1.1 GET without Host', 400, 3, head(['GET /healthz HTTP/1.1'])],
    [
      'an HTTP/1.1 POST without Host',
      400,
      3,
      head(['POST /support HTTP/1.1', 'Content-Type: application/json', 'Content-Length: 2']) +
        '{}',
    ],
    [
      'an Expect other than 100-continue',
      417,
      3,
      head(['POST /support HTTP/1.1', 'Host: x', 'Expect: weird', 'Content-Length: 2']) + '{}',
    ],
    ['an Expect on a GET', 417, 3, head(['GET /healthz HTTP/1.1', 'Host: x', 'Expect: 200-ok'])],
    ['a CONNECT', 404, 5, head(['CONNECT 127.0.0.1:1 HTTP/1.1', 'Host: 127.0.0.1:1'])],
    // Answered in the error shape already (the clientError handler): kept so.
    ['a malformed request line', 400, 3, head(['GET /he althz HTTP/1.1', 'Host: x'])],
    ['an unknown HTTP version', 400, 3, head(['GET /healthz HTTP/1.2', 'Host: x'])],
    [
      'headers past the limit',
      431,
      3,
      head(['GET /healthz HTTP/1.1', 'Host: x', `X-A: ${'a'.repeat(20_000)}`]),
    ],
    [
      'a broken chunked body',
      400,
      3,
      head(['POST /support HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked']) + 'zz\r\n{}\r\n',
    ],
  ];

  it.each(refused)('%s: %i code %i in the flat error body', async (_what, status, code, text) => {
    expectFlatError(await exchange(text), status, code);
  });

  it('names the Host header, before the credential is looked at', async () => {
    const answer = await exchange(head(['GET /wallets/me HTTP/1.1']));
    const body = expectFlatError(answer, 400, 3);
    expect(body.details).toEqual({ fields: [{ field: 'host', reason: 'is required' }] });
    expect(answer.headers['x-request-id']).toMatch(/^req_/);
  });

  it('still serves the requests those rules allow', async () => {
    // HTTP/1.0 needs no Host; an empty Host is a Host; 100-continue is honoured.
    const auth = `Authorization: ${member.headers.authorization}`;
    expect((await exchange(head(['GET /wallets/me HTTP/1.0', auth]))).status).toBe(200);
    expect((await exchange(head(['GET /wallets/me HTTP/1.1', 'Host:', auth]))).status).toBe(200);
    const body = JSON.stringify({ title: 't', content: 'c' });
    const continued = await exchange(
      head([
        'POST /support HTTP/1.1',
        'Host: x',
        auth,
        'Content-Type: application/json',
        'Expect: 100-continue',
        `Content-Length: ${body.length}`,
      ]) + body,
    );
    expect(continued.status, continued.body).toBe(200);
  });
});
