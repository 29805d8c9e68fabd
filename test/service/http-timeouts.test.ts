import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

const REQUEST_TIMEOUT_MS = 1500;
const HEADERS_TIMEOUT_MS = 1000;
const SLOW_CLIENTS = 1000;
const MARGIN_MS = 5000;

let port: number;
let member: TestMember;
const svc = useTestService({
  env: {
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    // Most slow clients are refused by the anonymous limit before their body is read:
    // those connections must be cut too.
    RATE_LIMIT_ENABLED: 'true',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '300',
    RATE_LIMIT_ANONYMOUS_PER_SECOND: '300',
  },
});
beforeAll(async () => {
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  port = (svc.app.server.address() as net.AddressInfo).port;
  member = await createMember(svc);
});

interface Slow {
  openedAt: number;
  closedAt: Promise<number>;
  received: () => string;
}

/** A client that sends `head` and then nothing more, keeping its socket open. */
async function slowClient(head: string): Promise<Slow> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closedAt = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(Date.now())),
  );
  socket.write(head);
  return { openedAt: Date.now(), closedAt, received: () => received };
}

const slowBody =
  'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
  'Content-Length: 1000\r\n\r\n{';
const slowHeaders = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ';

describe('slow clients', () => {
  it('are cut after the configured time while the service keeps answering everyone else', async () => {
    // Others' calls, every 100 ms throughout: a signed-in read and the health probe. The
    // service's clock, which the limiter reads, moves on as far each time: the read keeps
    // the pace it has in real time, well under the Read group's 50 a second.
    const statuses: number[] = [];
    let calling = true;
    const others = (async () => {
      while (calling) {
        const [me, health] = await Promise.all([
          fetch(`http://127.0.0.1:${port}/wallets/me`, { headers: member.headers }),
          fetch(`http://127.0.0.1:${port}/healthz`),
        ]);
        statuses.push(me.status, health.status);
        await Promise.all([me.arrayBuffer(), health.arrayBuffer()]);
        await new Promise((r) => setTimeout(r, 100));
        svc.clock.advance(100);
      }
    })();

    const clients: Slow[] = [];
    for (let i = 0; i < SLOW_CLIENTS; i += 100) {
      clients.push(...(await Promise.all(Array.from({ length: 100 }, () => slowClient(slowBody)))));
    }
    const headerClients = await Promise.all(
      Array.from({ length: 10 }, () => slowClient(slowHeaders)),
    );
    const lastOpened = Date.now();
    const closedAt = await Promise.all(clients.map((c) => c.closedAt));
    const headersClosedAt = await Promise.all(headerClients.map((c) => c.closedAt));
    calling = false;
    await others;

    // Each held until its time was up, then cut soon after (the limits are checked every
    // quarter second here; the margin is for a machine busy with other test files).
    clients.forEach((c, i) => {
      expect(closedAt[i]! - c.openedAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
      expect(closedAt[i]! - c.openedAt).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
    });
    expect(Math.max(...closedAt) - lastOpened).toBeLessThan(REQUEST_TIMEOUT_MS + MARGIN_MS);
    headerClients.forEach((c, i) => {
      expect(headersClosedAt[i]! - c.openedAt).toBeLessThan(HEADERS_TIMEOUT_MS + MARGIN_MS);
      expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    });
    // Those past the anonymous limit had their 429 and were cut all the same; the others
    // were told in the API's error shape that their request did not arrive in time.
    const refused = clients.filter((c) => c.received().startsWith('HTTP/1.1 429 '));
    const timedOut = clients.filter((c) => c.received().startsWith('HTTP/1.1 408 '));
    expect(refused.length).toBeGreaterThan(0);
    expect(timedOut.length).toBeGreaterThan(0);
    expect(timedOut[0]!.received()).toContain(
      '{"code":3,"message":"the request did not arrive in time"}',
    );

    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.every((s) => s === 200)).toBe(true);
  }, 60_000);
});
