import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, uniqueEmail } from '../helpers/identity.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * With SMTP_URL set, a code's email is handed to the mail server in the background, so the code
 * routes answer alike whether or not an account has the address (docs/auth.md, "Codes"): not
 * slower while a slow mail server takes the message, not 500 when it is down.
 */
interface Stub {
  server: Server;
  port: number;
  received: string[];
}

/** A mail server that waits `greetMs` before its greeting, then takes every message. */
async function smtpStub(greetMs: number): Promise<Stub> {
  const received: string[] = [];
  const server = createServer((sock: Socket) => {
    let buf = '';
    let inData = false;
    let current = '';
    setTimeout(() => sock.writable && sock.write('220 stub ESMTP\r\n'), greetMs);
    sock.on('error', () => undefined);
    sock.on('data', (chunk) => {
      buf += chunk.toString('utf8');
      for (let i = buf.indexOf('\r\n'); i >= 0; i = buf.indexOf('\r\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (inData) {
          if (line === '.') {
            inData = false;
            received.push(current);
            sock.write('250 OK\r\n');
          } else current += `${line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'DATA') {
          inData = true;
          current = '';
          sock.write('354 go on\r\n');
        } else if (verb === 'QUIT') sock.end('221 bye\r\n');
        else sock.write(verb === 'EHLO' || verb === 'HELO' ? '250 stub\r\n' : '250 OK\r\n');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, received };
}

/** A port nothing listens on (a mail server that is down). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const services: TestService[] = [];
const stubs: Stub[] = [];
afterAll(async () => {
  for (const s of services) await s.stop();
  for (const s of stubs) await new Promise((r) => s.server.close(r));
});

async function serviceWith(port: number): Promise<TestService> {
  const svc = await startTestService({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  services.push(svc);
  return svc;
}

const askOtp = async (svc: TestService, email: string) => {
  const started = Date.now();
  const res = await svc.app.inject({ method: 'POST', url: '/auth/otp', payload: { email } });
  return { status: res.statusCode, ms: Date.now() - started };
};

describe('code emails through SMTP', () => {
  let slow: Stub;
  beforeAll(async () => {
    slow = await smtpStub(3_000);
    stubs.push(slow);
  });

  it('answer as fast for an account as for none while the mail server is slow, and arrive', async () => {
    const svc = await serviceWith(slow.port);
    const acct = await signUp(svc);
    const known = await askOtp(svc, acct.email);
    const unknown = await askOtp(svc, uniqueEmail('nobody'));
    expect([known.status, unknown.status]).toEqual([200, 200]);
    // The mail server greets after 3 s: an answer that waited for it would take longer.
    expect(known.ms).toBeLessThan(2_000);
    const deadline = Date.now() + 10_000;
    while (!slow.received.some((m) => m.includes(acct.email)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const mail = slow.received.find((m) => m.includes(acct.email) && /\b\d{6}\b/.test(m));
    expect(mail, 'the code email reached the mail server').toBeDefined();
  });

  it('answer 200 for an account when the mail server is down, as for none', async () => {
    const svc = await serviceWith(await closedPort());
    const acct = await signUp(svc);
    const known = await askOtp(svc, acct.email);
    const unknown = await askOtp(svc, uniqueEmail('nobody'));
    expect([known.status, unknown.status]).toEqual([200, 200]);
  });
});
