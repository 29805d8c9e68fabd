import { createSocket, type RemoteInfo } from 'node:dgram';
import { answer, question } from './dns-wire.js';

/**
 * A name server of the test's own on loopback (UDP), for the service's real resolver
 * (dns-resolver.ts, through `createWebhooks({nameServers})`): `*.ok.test` answers an A
 * record of 127.0.0.1 (and no AAAA), `*.hang.test` is not answered until `release()`, and
 * any other name does not exist (NXDOMAIN).
 */
export interface TestNameServer {
  /** For `nameServers` / `dnsResolver({servers})`. */
  servers: string[];
  /** The names of the queries held unanswered now (a lookup sends A and AAAA). */
  held(): Set<string>;
  /** Answers every held query, and every later one until `hold()`, NXDOMAIN. */
  release(): void;
  /** Holds `*.hang.test` queries again (as at the start). */
  hold(): void;
  close(): Promise<void>;
}

export async function startNameServer(): Promise<TestNameServer> {
  const server = createSocket('udp4');
  const held: { name: string; msg: Buffer; end: number; from: RemoteInfo }[] = [];
  let released = false;
  const send = (reply: Buffer, from: RemoteInfo) => server.send(reply, from.port, from.address);
  server.on('message', (msg, from) => {
    const { name, end } = question(msg);
    const type = msg.readUInt16BE(end - 4);
    if (name.endsWith('.hang.test') && !released) {
      held.push({ name, msg, end, from });
      return;
    }
    const reply = name.endsWith('.ok.test')
      ? answer(msg, end, 0, type === 1 ? [127, 0, 0, 1] : null)
      : answer(msg, end, 3, null);
    send(reply, from);
  });
  await new Promise<void>((done) => server.bind(0, '127.0.0.1', done));
  return {
    servers: [`127.0.0.1:${server.address().port}`],
    held: () => new Set(held.map((q) => q.name)),
    release() {
      released = true;
      for (const q of held.splice(0)) send(answer(q.msg, q.end, 3, null), q.from);
    },
    hold() {
      released = false;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
