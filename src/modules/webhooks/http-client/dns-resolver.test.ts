/**
 * Webhook host names through DNS (dns-resolver.ts), against a name server of our own on
 * loopback: it answers `*.ok.test` with an A record, says NXDOMAIN for `*.gone.test`, and
 * never answers `*.hang.test`. Behind the lookup gate, names that hang do not hold up others.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsResolver } from './dns-resolver.js';
import { gatedResolver } from './lookup-gate.js';
import { answer, question } from '../../../../test/helpers/dns-wire.js';

let server: Socket;
let servers: string[];
const asked: string[] = [];

beforeAll(async () => {
  server = createSocket('udp4');
  server.on('message', (msg, from) => {
    const { name, end } = question(msg);
    const type = msg.readUInt16BE(end - 4);
    asked.push(name);
    if (name.endsWith('.hang.test')) return;
    const reply = name.endsWith('.ok.test')
      ? answer(msg, end, 0, type === 1 ? [93, 184, 216, 34] : null)
      : answer(msg, end, 3, null);
    server.send(reply, from.port, from.address);
  });
  await new Promise<void>((done) => server.bind(0, '127.0.0.1', done));
  servers = [`127.0.0.1:${server.address().port}`];
});
afterAll(() => {
  server?.close();
});

describe('dnsResolver', () => {
  it('answers the A records of a name; a name without AAAA is not a failure', async () => {
    expect(await dnsResolver({ servers })('a.ok.test')).toEqual(['93.184.216.34']);
    expect(await dnsResolver({ servers })('A.OK.test.')).toEqual(['93.184.216.34']);
  });

  it('fails a name that does not exist', async () => {
    await expect(dnsResolver({ servers })('x.gone.test')).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
  });

  it('answers IP literals and localhost without asking anyone', async () => {
    const before = asked.length;
    const resolve = dnsResolver({ servers });
    expect(await resolve('203.0.113.9')).toEqual(['203.0.113.9']);
    expect(await resolve('[2001:db8::1]')).toEqual(['2001:db8::1']);
    expect(await resolve('localhost')).toEqual(['127.0.0.1', '::1']);
    expect(await resolve('api.localhost')).toEqual(['127.0.0.1', '::1']);
    expect(asked.length).toBe(before);
  });

  it('gives up on a name nobody answers for, within its tries', async () => {
    const started = Date.now();
    await expect(
      dnsResolver({ servers, timeoutMs: 200, tries: 2 })('slow.hang.test'),
    ).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('stops at its deadline, however long its queries would take', async () => {
    const started = Date.now();
    await expect(
      dnsResolver({ servers, timeoutMs: 5_000, tries: 3, deadlineMs: 200 })('long.hang.test'),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('stops at once when the caller stops waiting', async () => {
    const started = Date.now();
    await expect(
      dnsResolver({ servers, timeoutMs: 5_000 })('wait.hang.test', AbortSignal.timeout(100)),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('behind the lookup gate', () => {
  it('many names that hang do not hold up a name that answers', async () => {
    const resolve = gatedResolver(dnsResolver({ servers, timeoutMs: 500, tries: 2 }));
    // As many hanging names as a whole organization's attempts in flight (64), more than
    // the two that could hang at once before.
    const hanging = Array.from({ length: 64 }, (_, i) =>
      resolve(`n${i}.hang.test`, AbortSignal.timeout(10_000)).catch(() => 'gave up'),
    );
    const started = Date.now();
    expect(await resolve('other.ok.test')).toEqual(['93.184.216.34']);
    expect(Date.now() - started).toBeLessThan(500);
    expect(await Promise.all(hanging)).toEqual(hanging.map(() => 'gave up'));
  }, 20_000);

  it('a lookup nobody waits for any more is stopped, and frees its slot', async () => {
    // One slot: a name that never answers, whose only caller gives up after 100 ms.
    const resolve = gatedResolver(dnsResolver({ servers, timeoutMs: 5_000, tries: 2 }), 1);
    await expect(resolve('gone.hang.test', AbortSignal.timeout(100))).rejects.toThrow();
    const started = Date.now();
    expect(await resolve('next.ok.test', AbortSignal.timeout(10_000))).toEqual(['93.184.216.34']);
    expect(Date.now() - started).toBeLessThan(500);
  }, 20_000);
});
