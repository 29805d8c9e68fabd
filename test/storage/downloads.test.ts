import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { DiskBlobStore } from '../../src/modules/storage/disk-store.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { form } from '../helpers/multipart.js';

/**
 * Downloads through the app listening on a loopback port (inject() has no slow clients):
 * streamed with the headers they always had, bounded in memory however many clients stop
 * reading, cut when stalled or too slow, at most STORAGE_MAX_DOWNLOADS at once and
 * STORAGE_MAX_DOWNLOADS_PER_CLIENT to one client, and HEAD without the file (docs/objects.md,
 * "Files"; docs/self-hosting.md, "Slow clients").
 */

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** Larger than what the kernel's socket buffers take on loopback (4 MB send buffer here). */
const FILE_BYTES = 8 * 1024 * 1024;
const STALLED = 40;
const MAX_DOWNLOADS = 48;
const IDLE_MS = 4000;
/**
 * For a machine busy with other test files; below IDLE_MS, so a cut only after twice the
 * timeout (Node's own idle timer) fails.
 */
const MARGIN_MS = 2000;

let dir: string;
let port: number;
let m: TestMember;
const big = Buffer.concat([PNG, randomBytes(FILE_BYTES - PNG.length)]);
let publicId: string;
let privateId: string;
let smallId: string;

const svc = useTestService(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-downloads-'));
  return {
    env: {
      STORAGE_DIR: dir,
      UPLOAD_LIMIT_BYTES: String(FILE_BYTES + 1024 * 1024),
      HTTP_IDLE_TIMEOUT_MS: String(IDLE_MS),
      STORAGE_MAX_DOWNLOADS: String(MAX_DOWNLOADS),
      // Every client here is 127.0.0.1: this instance tests the bound of the whole process.
      STORAGE_MAX_DOWNLOADS_PER_CLIENT: String(MAX_DOWNLOADS),
    },
  };
});

async function upload(name: string, bytes: Buffer, isPublic: boolean): Promise<string> {
  const f = form([
    { name: 'file', filename: name, data: bytes },
    { name: 'is_public', data: String(isPublic) },
  ]);
  const res = await svc.app.inject({
    method: 'POST',
    url: '/storage/upload',
    headers: { ...m.headers, 'content-type': f.type },
    payload: f.payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

beforeAll(async () => {
  await svc.app.listen({ port: 0, host: '127.0.0.1' });
  port = (svc.app.server.address() as net.AddressInfo).port;
  m = await createMember(svc);
  publicId = await upload('big one (1).png', big, true);
  privateId = await upload('private.png', Buffer.concat([big.subarray(0, 1024), PNG]), false);
  smallId = await upload('small.png', PNG, true);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const url = (id: string, at = port) => `http://127.0.0.1:${at}/storage/files/${id}`;

interface Stalled {
  sentAt: number;
  /** When the server closed its end of this connection, and how long after its last progress. */
  serverClosed: Promise<{ at: number; stalledFor: number }>;
  /** Reads on from here, and resolves with every byte received once the server ends it. */
  drain: () => Promise<Buffer>;
  socket: net.Socket;
}

/** The servers' sockets, by the client's port: to see when the server closes one. */
const serverSockets = new Map<number, net.Socket>();
function watchSockets(server: net.Server) {
  server.on('connection', (s: net.Socket) => {
    const remote = s.remotePort!;
    serverSockets.set(remote, s);
    s.once('close', () => {
      if (serverSockets.get(remote) === s) serverSockets.delete(remote);
    });
  });
}
beforeAll(() => watchSockets(svc.app.server));

/**
 * A client that asks for a file, takes the first chunk of the answer (so the answer has
 * begun), then reads nothing more: the server's writes fill the socket's buffers and stall.
 * `from` is the address a trusted proxy says the request comes from (X-Forwarded-For).
 */
async function stalledDownload(
  id: string,
  { at = port, from }: { at?: number; from?: string } = {},
): Promise<Stalled> {
  const socket = net.connect(at, '127.0.0.1');
  socket.on('error', (err) => errors.push(err));
  await once(socket, 'connect');
  const server = await waitFor(() => serverSockets.get(socket.localPort!));
  // When the server last got a write of this answer through to the kernel, polled: the cut is
  // counted from there, not from the request, which a busy machine may take long to start.
  let lastProgress = Date.now();
  let through = -1;
  const poll = setInterval(() => {
    const now = server.bytesWritten - server.writableLength;
    if (now !== through) [through, lastProgress] = [now, Date.now()];
  }, 20);
  // Not events.once: the server's socket may fail (a client gone mid-write) before it closes.
  const serverClosed = new Promise<{ at: number; stalledFor: number }>((resolve) =>
    server.once('close', () => {
      clearInterval(poll);
      resolve({ at: Date.now(), stalledFor: Date.now() - lastProgress });
    }),
  );
  const sentAt = Date.now();
  const forwarded = from === undefined ? '' : `X-Forwarded-For: ${from}\r\n`;
  socket.write(`GET /storage/files/${id} HTTP/1.1\r\nHost: x\r\n${forwarded}\r\n`);
  await once(socket, 'readable');
  const first = socket.read() as Buffer;
  return {
    sentAt,
    serverClosed,
    socket,
    drain: async () => {
      const chunks = [first];
      socket.on('data', (d: Buffer) => chunks.push(d));
      await once(socket, 'close');
      return Buffer.concat(chunks);
    },
  };
}

async function waitFor<T>(get: () => T | undefined): Promise<T> {
  for (;;) {
    const v = get();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
}

const errors: Error[] = [];

/**
 * A full garbage collection, so memory is what is held, not chunks already sent and not yet
 * collected (the socket's buffers on loopback take some 4 MB per connection before it stalls).
 */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** This process's descriptors open on the big file's blob. */
async function blobDescriptors(): Promise<number> {
  const { sha256 } = await import('../../src/lib/hash.js');
  const hex = sha256(big).toString('hex');
  const blob = path.join(dir, hex.slice(0, 2), hex.slice(2, 4), hex);
  let n = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => '')) === blob) n++;
  }
  return n;
}

describe('GET /storage/files/{id} over a real connection', () => {
  it('sends the stored bytes whole, with the headers downloads always had', async () => {
    const res = await fetch(url(publicId));
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(big)).toBe(true);
    const headers = Object.fromEntries(res.headers);
    expect(headers).toMatchObject({
      'content-type': 'image/png',
      'content-length': String(FILE_BYTES),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'content-disposition': `inline; filename="big one (1).png"; filename*=UTF-8''big%20one%20%281%29.png`,
      'cache-control': 'public, max-age=31536000, immutable',
    });
    expect(headers['transfer-encoding']).toBeUndefined();

    const own = await fetch(url(privateId), { headers: m.headers });
    expect(own.status).toBe(200);
    expect(own.headers.get('cache-control')).toBe('private, no-store');
    expect(own.headers.get('content-length')).toBe(String(1024 + PNG.length));
    expect(
      Buffer.from(await own.arrayBuffer()).equals(Buffer.concat([big.subarray(0, 1024), PNG])),
    ).toBe(true);
    const anon = await fetch(url(privateId));
    expect(anon.status).toBe(404);
    expect(await anon.json()).toMatchObject({ code: 5 });

    // HEAD: the headers and length of the file, no body.
    const head = await fetch(url(publicId), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(FILE_BYTES));
    expect(head.headers.get('content-type')).toBe('image/png');
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('answers 404 code 5, before sending anything, for a file whose bytes are gone', async () => {
    const bytes = Buffer.concat([PNG, randomBytes(64)]);
    const id = await upload('gone.png', bytes, true);
    const { sha256 } = await import('../../src/lib/hash.js');
    const hex = sha256(bytes).toString('hex');
    await rm(path.join(dir, hex.slice(0, 2), hex.slice(2, 4), hex));
    const res = await fetch(url(id));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 5, message: 'file not found' });
    expect((await fetch(url(id), { method: 'HEAD' })).status).toBe(404);
  });

  it(`keeps memory far below the file's size times the clients when ${STALLED} stop reading, and cuts them after the idle timeout`, async () => {
    await (await fetch(url(publicId))).arrayBuffer(); // every path warmed
    collectGarbage();
    const before = process.memoryUsage();
    const clients = await Promise.all(
      Array.from({ length: STALLED }, () => stalledDownload(publicId)),
    );
    // The server has written what the sockets take and is stalled.
    await new Promise((r) => setTimeout(r, 500));
    collectGarbage();
    const during = process.memoryUsage();
    const held = STALLED * FILE_BYTES; // 320 MiB: what whole files in memory would take
    const grown = {
      rss: during.rss - before.rss,
      external: during.external - before.external,
      arrayBuffers: during.arrayBuffers - before.arrayBuffers,
    };
    // A few chunks per client (64 KiB reads, on each side of the connection: the clients run
    // here too), about 1 MiB at most, not the 8 MiB file: under 1/6 of whole files (those
    // take all of it, about 300 MiB), and the process under 1/4.
    expect.soft(grown.arrayBuffers, JSON.stringify(grown)).toBeLessThan(held / 6);
    expect.soft(grown.external, JSON.stringify(grown)).toBeLessThan(held / 6);
    expect.soft(grown.rss, JSON.stringify(grown)).toBeLessThan(held / 4);
    // Each download holds its file open meanwhile (the file is streamed from it).
    expect.soft(await blobDescriptors()).toBe(STALLED);

    // Each cut by the server once it has taken nothing for the idle timeout, not before.
    const closed = await Promise.all(clients.map((c) => c.serverClosed));
    const waited = clients.map((c, i) => closed[i]!.at - c.sentAt);
    expect.soft(Math.min(...waited)).toBeGreaterThanOrEqual(IDLE_MS - 100);
    const stalled = closed.map((c) => c.stalledFor);
    expect.soft(Math.min(...stalled)).toBeGreaterThanOrEqual(IDLE_MS - 200);
    expect.soft(Math.max(...stalled)).toBeLessThan(IDLE_MS + MARGIN_MS);
    // Reading on, each client gets what was sent before the cut, then the end: not the file.
    const received = await Promise.all(clients.map((c) => c.drain()));
    for (const r of received) {
      expect(r.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
      expect(r.length).toBeLessThan(FILE_BYTES);
    }
    // Their descriptors are closed.
    expect(await blobDescriptors()).toBe(0);
    expect(errors).toEqual([]);
  }, 30_000);

  it(`refuses downloads past ${MAX_DOWNLOADS} at once with 503 code 14 and Retry-After; slots come back`, async () => {
    const clients = await Promise.all(
      Array.from({ length: MAX_DOWNLOADS }, () => stalledDownload(publicId)),
    );
    const refused = await fetch(url(smallId));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ code: 14 });
    // Refused before the file is looked up: a missing one is refused alike.
    expect((await fetch(url(newId('file')))).status).toBe(503);

    // Cut as stalled, they give their slots back.
    await Promise.all(clients.map((c) => c.serverClosed));
    for (const c of clients) c.socket.destroy();
    // Downloads that finish give theirs back too, and so do refusals (404): twice the bound,
    // one after the other.
    for (let i = 0; i < 2 * MAX_DOWNLOADS; i++) {
      const ok = await fetch(url(smallId));
      expect(ok.status).toBe(200);
      expect(Buffer.from(await ok.arrayBuffer()).equals(PNG)).toBe(true);
      expect((await fetch(url(newId('file')))).status).toBe(404);
    }
    // And clients that go away mid-download.
    const gone = await Promise.all(
      Array.from({ length: MAX_DOWNLOADS }, () => stalledDownload(publicId)),
    );
    for (const c of gone) c.socket.destroy();
    await Promise.all(gone.map((c) => c.serverClosed));
    const after = await Promise.all(
      Array.from({ length: MAX_DOWNLOADS }, () => fetch(url(smallId))),
    );
    expect(after.map((r) => r.status)).toEqual(Array(MAX_DOWNLOADS).fill(200));
    await Promise.all(after.map((r) => r.arrayBuffer()));
  }, 30_000);
});

/**
 * A second instance on the same database and files, behind a trusted proxy (the loopback
 * address), so that requests come from the client addresses they say, with small bounds: 4
 * downloads at once, 2 to one client, and a download cut unless read whole within 2 s plus its
 * size at 16 MiB/s (2.5 s for the big file). Its idle timeout is beyond any test's length, so
 * a cut here is the deadline's.
 */
const STRICT = { max: 4, perClient: 2, graceMs: 2000, minBytesPerSecond: 16 * 1024 * 1024 };
const DEADLINE_MS = STRICT.graceMs + (FILE_BYTES * 1000) / STRICT.minBytesPerSecond;
/** The slow reader's pace: 400 KB/s, steady, far below the floor (and the file 20 s long). */
const TRICKLE_BYTES_PER_MS = 400;

describe('downloads per client, slow readers and HEAD', () => {
  const strict = useTestService(() => ({
    databaseUrl: svc.config.databaseUrl!,
    env: {
      STORAGE_DIR: dir,
      TRUST_PROXY: '127.0.0.1',
      HTTP_IDLE_TIMEOUT_MS: '60000',
      STORAGE_MAX_DOWNLOADS: String(STRICT.max),
      STORAGE_MAX_DOWNLOADS_PER_CLIENT: String(STRICT.perClient),
      STORAGE_DOWNLOAD_GRACE_MS: String(STRICT.graceMs),
      STORAGE_DOWNLOAD_MIN_BYTES_PER_SECOND: String(STRICT.minBytesPerSecond),
    },
  }));
  let at: number;
  beforeAll(async () => {
    await strict.app.listen({ port: 0, host: '127.0.0.1' });
    at = (strict.app.server.address() as net.AddressInfo).port;
    watchSockets(strict.app.server);
  });
  const from = (ip: string, headers: Record<string, string> = {}) => ({
    headers: { ...headers, 'x-forwarded-for': ip },
  });

  it('refuses one client past STORAGE_MAX_DOWNLOADS_PER_CLIENT with 503 code 14; another still gets its file', async () => {
    // Two addresses of one IPv6 /64: one client, as for per-address rate limits.
    const mine = await Promise.all(
      ['2001:db8:1:2::1', '2001:db8:1:2::2'].map((ip) =>
        stalledDownload(publicId, { at, from: ip }),
      ),
    );
    const refused = await fetch(url(smallId, at), from('2001:db8:1:2::3'));
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      code: 14,
      message: `too many files are being downloaded by this client at once (at most ${STRICT.perClient}); retry when one is done`,
      details: { retry_after_seconds: 1, max_downloads_per_client: STRICT.perClient },
    });
    // Another client meanwhile: its file.
    const other = await fetch(url(smallId, at), from('198.51.100.7'));
    expect(other.status).toBe(200);
    expect(Buffer.from(await other.arrayBuffer()).equals(PNG)).toBe(true);
    // Its downloads over, the first client downloads again.
    for (const c of mine) c.socket.destroy();
    await Promise.all(mine.map((c) => c.serverClosed));
    const again = await fetch(url(smallId, at), from('2001:db8:1:2::3'));
    expect(again.status).toBe(200);
    expect(Buffer.from(await again.arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('answers HEAD with the headers alone, without opening the file or taking a slot', async () => {
    // Every slot taken, by two clients.
    const held = await Promise.all(
      ['203.0.113.1', '203.0.113.1', '203.0.113.2', '203.0.113.2'].map((ip) =>
        stalledDownload(publicId, { at, from: ip }),
      ),
    );
    expect((await fetch(url(smallId, at), from('203.0.113.3'))).status).toBe(503);
    const opened = vi.spyOn(DiskBlobStore.prototype, 'open');
    try {
      const heads = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(url(publicId, at), { method: 'HEAD', ...from('203.0.113.3') }),
        ),
      );
      for (const head of heads) {
        expect(head.status).toBe(200);
        expect(Object.fromEntries(head.headers)).toMatchObject({
          'content-type': 'image/png',
          'content-length': String(FILE_BYTES),
          'x-content-type-options': 'nosniff',
          'content-disposition': `inline; filename="big one (1).png"; filename*=UTF-8''big%20one%20%281%29.png`,
          'cache-control': 'public, max-age=31536000, immutable',
        });
        expect((await head.arrayBuffer()).byteLength).toBe(0);
      }
      // A private file as GET answers it: to its organization, and 404 to anyone else.
      const own = await fetch(url(privateId, at), {
        method: 'HEAD',
        ...from('203.0.113.3', m.headers),
      });
      expect(own.status).toBe(200);
      expect(own.headers.get('content-length')).toBe(String(1024 + PNG.length));
      expect(own.headers.get('cache-control')).toBe('private, no-store');
      expect((await fetch(url(privateId, at), { method: 'HEAD' })).status).toBe(404);
      expect((await fetch(url(newId('file'), at), { method: 'HEAD' })).status).toBe(404);
      expect(opened).not.toHaveBeenCalled();
    } finally {
      opened.mockRestore();
    }
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.serverClosed));
  });

  it('cuts a client that reads steadily but too slowly once the file has taken longer than its size allows', async () => {
    const socket = net.connect(at, '127.0.0.1');
    socket.on('error', () => undefined); // the cut may reach it as a reset
    await once(socket, 'connect');
    const server = await waitFor(() => serverSockets.get(socket.localPort!));
    const serverClosed = new Promise<number>((resolve) =>
      server.once('close', () => resolve(Date.now())),
    );
    let received = 0;
    let trickle = true;
    socket.on('data', (d: Buffer) => {
      received += d.length;
      if (!trickle) return;
      socket.pause();
      setTimeout(() => socket.resume(), d.length / TRICKLE_BYTES_PER_MS);
    });
    const sentAt = Date.now();
    socket.write(
      `GET /storage/files/${publicId} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.9\r\n\r\n`,
    );
    const closedAt = await Promise.race([
      serverClosed,
      new Promise<null>((r) => setTimeout(() => r(null), DEADLINE_MS + MARGIN_MS)),
    ]);
    const readBefore = received;
    trickle = false;
    socket.resume();
    if (closedAt === null) socket.destroy();
    else await once(socket, 'close');
    // Cut by the server at its deadline, not before, while the client was reading on.
    expect(closedAt).not.toBeNull();
    expect(closedAt! - sentAt).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    expect(readBefore).toBeGreaterThan((TRICKLE_BYTES_PER_MS * DEADLINE_MS) / 4);
    expect(received).toBeLessThan(FILE_BYTES);
  });
});
