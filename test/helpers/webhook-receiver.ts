// @peculiar/x509's CommonJS build (what Node loads outside vitest) needs this first, as
// @simplewebauthn/server does.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface TestCa {
  /** The CA certificate's file, for WEBHOOK_CA_FILE. */
  caFile: string;
  /** A server certificate and key for localhost, 127.0.0.1 and ::1, signed by the CA. */
  cert: string;
  key: string;
}

async function pemKey(key: webcrypto.CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  const lines = der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n');
  return `-----BEGIN PRIVATE KEY-----\n${lines}\n-----END PRIVATE KEY-----\n`;
}

/** A throwaway CA made by the test, and a localhost certificate it signed (issue 20 item 9). */
export async function makeTestCa(): Promise<TestCa> {
  const notBefore = new Date(Date.now() - 3_600_000);
  const notAfter = new Date(Date.now() + 7 * 24 * 3_600_000);
  const caKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=ONS webhook test CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
    ],
  });
  const leafKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=localhost',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingKey: caKeys.privateKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'dns', value: 'rebind.example' },
        // The names test/helpers/name-server.ts answers with 127.0.0.1.
        { type: 'dns', value: '*.ok.test' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'ons-webhook-ca-'));
  const caFile = path.join(dir, 'ca.pem');
  writeFileSync(caFile, ca.toString('pem'));
  return { caFile, cert: leaf.toString('pem'), key: await pemKey(leafKeys.privateKey) };
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Real time (performance.now()) when the request was complete. */
  at: number;
}

/**
 * What the receiver answers: a status, after a delay; `hang` never answers; `drip` sends a
 * 200 and its headers at once, then one byte of body every 200 ms, never ending.
 */
export type Answer =
  | { status: number; delayMs?: number; headers?: Record<string, string>; body?: string }
  | 'hang'
  | 'drip';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted so far. */
  connections: number;
  /** Requests being answered right now, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  answer: (r: Received) => Answer;
  close(): Promise<void>;
}

/** A real HTTPS server on 127.0.0.1 that records what it receives. */
export async function startReceiver(
  ca: TestCa,
  answer: Receiver['answer'] = () => ({ status: 200 }),
): Promise<Receiver> {
  const sockets = new Set<import('node:net').Socket>();
  const r: Receiver = {
    url: '',
    port: 0,
    received: [],
    connections: 0,
    inFlight: 0,
    maxInFlight: 0,
    answer,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      r.received.push(got);
      r.inFlight++;
      r.maxInFlight = Math.max(r.maxInFlight, r.inFlight);
      const a = r.answer(got);
      res.on('close', () => r.inFlight--);
      if (a === 'hang') return;
      if (a === 'drip') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
        const timer = setInterval(() => res.write('.'), 200);
        res.on('close', () => clearInterval(timer));
        return;
      }
      setTimeout(() => {
        res.writeHead(a.status, a.headers ?? {});
        res.end(a.body ?? 'ok');
      }, a.delayMs ?? 0);
    });
  });
  server.on('connection', (s: import('node:net').Socket) => {
    r.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('secureConnection', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  r.port = typeof address === 'object' && address ? address.port : 0;
  r.url = `https://127.0.0.1:${r.port}/hook`;
  return r;
}
