import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { form } from '../helpers/multipart.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let m: TestMember;
let dir: string;

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
const LIMIT = 64 * 1024;

async function upload(headers: Record<string, string>, parts: Parameters<typeof form>[0]) {
  return uploadWith(headers, parts);
}

async function uploadWith(
  headers: Record<string, string>,
  parts: Parameters<typeof form>[0],
  key?: string,
) {
  const f = form(parts);
  return svc.app.inject({
    method: 'POST',
    url: '/storage/upload',
    headers: {
      ...headers,
      'content-type': f.type,
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: f.payload,
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-files-'));
  svc = await startTestService({
    env: {
      STORAGE_DIR: dir,
      UPLOAD_LIMIT_BYTES: String(LIMIT),
      BODY_LIMIT_BYTES: '16384',
      PUBLIC_URL: 'https://ons.example',
    },
  });
  m = await createMember(svc, { role: 'member' });
});
afterAll(async () => {
  await svc.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('POST /storage/upload', () => {
  it('answers a retry with the same Idempotency-Key and file once, and refuses another file', async () => {
    const key = `upload-${newId('file')}`;
    const parts = [
      { name: 'file', filename: 'once.png', type: 'image/png', data: PNG },
      { name: 'is_public', data: 'true' },
    ];
    const first = await uploadWith(m.headers, parts, key);
    expect(first.statusCode, first.body).toBe(200);
    // Another multipart boundary, the same form: the same answer, no second file.
    const again = await uploadWith(m.headers, parts, key);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await uploadWith(
      m.headers,
      [{ name: 'file', filename: 'once.png', type: 'image/svg+xml', data: SVG }],
      key,
    );
    expect(other.statusCode).toBe(400);
    expect(other.json().details.fields[0].field).toBe('Idempotency-Key');
    // A replay must not go on to store the file after answering (it once did, unseen when the
    // count below ran first): give such a late write time to land before counting.
    await new Promise((r) => setTimeout(r, 300));
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM files WHERE organization_id = ${m.orgId} AND name = 'once.png'`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it('stores a PNG content-addressed and answers the image record', async () => {
    const res = await upload(m.headers, [
      { name: 'file', filename: 'dot.png', type: 'text/plain', data: PNG },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const rec = res.json();
    const hex = createHash('sha256').update(PNG).digest('hex');
    expect(rec).toEqual({
      id: expect.stringMatching(/^fil_/),
      name: 'dot.png',
      type: 'image/png',
      url: `https://ons.example/storage/files/${rec.id}`,
      hash: `0x${hex}`,
      is_public: false,
      when_created: svc.clock.now().toISOString(),
    });
    const { stat } = await import('node:fs/promises');
    await expect(stat(path.join(dir, hex.slice(0, 2), hex.slice(2, 4), hex))).resolves.toBeTruthy();
  });

  it('takes is_public from the form, before or after the file', async () => {
    const after = await upload(m.headers, [
      { name: 'file', filename: 'a.png', data: PNG },
      { name: 'is_public', data: 'true' },
    ]);
    expect(after.json().is_public).toBe(true);
    const bad = await upload(m.headers, [
      { name: 'is_public', data: 'yes' },
      { name: 'file', filename: 'a.png', data: PNG },
    ]);
    expect(bad.statusCode).toBe(400);
  });

  it('refuses SVG, unknown bytes, an empty file and a missing file with 400 code 3', async () => {
    for (const parts of [
      [{ name: 'file', filename: 'x.svg', type: 'image/svg+xml', data: SVG }],
      [
        {
          name: 'file',
          filename: 'x.png',
          type: 'image/png',
          data: Buffer.from('just text, not a png'),
        },
      ],
      [{ name: 'file', filename: 'x.png', data: Buffer.alloc(0) }],
      [{ name: 'is_public', data: 'true' }],
      [{ name: 'other', filename: 'x.png', data: PNG }],
    ]) {
      const res = await upload(m.headers, parts);
      expect(res.statusCode, JSON.stringify(parts[0])).toBe(400);
      expect(res.json().code).toBe(3);
    }
    const notMultipart = await svc.app.inject({
      method: 'POST',
      url: '/storage/upload',
      headers: m.headers,
      payload: { file: 'x' },
    });
    expect(notMultipart.statusCode).toBe(400);
  });

  it('accepts a file above the JSON body limit but within the upload limit', async () => {
    const mid = Buffer.concat([PNG, Buffer.alloc(LIMIT / 2)]);
    const res = await upload(m.headers, [{ name: 'file', filename: 'mid.png', data: mid }]);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses a file over the configured limit with 413 code 3', async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(LIMIT)]);
    const res = await upload(m.headers, [{ name: 'file', filename: 'big.png', data: big }]);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe(3);
  });

  it('refuses no credentials with 401 code 16 and a viewer (no storage.create) with 403 code 7', async () => {
    const anon = await upload({}, [{ name: 'file', filename: 'a.png', data: PNG }]);
    expect(anon.statusCode).toBe(401);
    expect(anon.json().code).toBe(16);
    const viewer = await createMember(svc, { role: 'viewer', orgId: m.orgId });
    const res = await upload(viewer.headers, [{ name: 'file', filename: 'a.png', data: PNG }]);
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe(7);
  });
});

describe('GET /storage/files/{id}', () => {
  it('serves a public file to anyone with its type', async () => {
    const rec = (
      await upload(m.headers, [
        { name: 'file', filename: 'p.png', data: PNG },
        { name: 'is_public', data: 'true' },
      ])
    ).json();
    const res = await svc.app.inject({ method: 'GET', url: new URL(rec.url).pathname });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.rawPayload.equals(PNG)).toBe(true);
  });

  it('names the file once in Content-Disposition: UTF-8 in filename*, an ASCII fallback', async () => {
    const name = "Q3 'draft' (Grüße, 東京) 100%.png";
    const rec = (
      await upload(m.headers, [
        { name: 'file', filename: name, data: PNG },
        { name: 'is_public', data: 'true' },
      ])
    ).json();
    expect(rec.name).toBe(name);
    const res = await svc.app.inject({ method: 'GET', url: `/storage/files/${rec.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe(
      `inline; filename="Q3 'draft' (Gr__e, __) 100_.png"; ` +
        `filename*=UTF-8''Q3%20%27draft%27%20%28Gr%C3%BC%C3%9Fe%2C%20%E6%9D%B1%E4%BA%AC%29%20100%25.png`,
    );
    // Read back as a browser does: the exact name.
    const star = /filename\*=UTF-8''(\S+)$/.exec(String(res.headers['content-disposition']))![1]!;
    expect(decodeURIComponent(star)).toBe(name);
  });

  it('cuts a long name to 255 UTF-16 units without splitting a character, as answered so stored', async () => {
    // 200 emoji are 400 units: the 255th is the first half of the 128th emoji's pair, which
    // was kept alone (answered as \ud83d, stored by PostgreSQL as U+FFFD).
    const name = '\u{1F600}'.repeat(200) + '.png';
    const res = await upload(m.headers, [{ name: 'file', filename: name, data: PNG }]);
    expect(res.statusCode, res.body).toBe(200);
    const rec = res.json<{ id: string; name: string }>();
    expect(rec.name).toBe('\u{1F600}'.repeat(127));
    const { rows } = await svc.container.db.execute<{ name: string }>(
      sql`SELECT name FROM files WHERE id = ${rec.id}`,
    );
    expect(rows[0]!.name).toBe(rec.name);
    const download = await svc.app.inject({
      method: 'GET',
      url: `/storage/files/${rec.id}`,
      headers: m.headers,
    });
    const star = /filename\*=UTF-8''(\S+)$/.exec(
      String(download.headers['content-disposition']),
    )![1]!;
    expect(decodeURIComponent(star)).toBe(rec.name);
  });

  it('serves a private file only to its organization with storage.read; anyone else gets 404', async () => {
    const rec = (await upload(m.headers, [{ name: 'file', filename: 'p.png', data: PNG }])).json();
    const url = `/storage/files/${rec.id}`;
    // Another member's file: a member holds storage.read, a viewer does not (the whole
    // matrix is in test/permissions/route-permissions.test.ts).
    const colleague = await createMember(svc, { role: 'member', orgId: m.orgId });
    const own = await svc.app.inject({ method: 'GET', url, headers: colleague.headers });
    expect(own.statusCode).toBe(200);
    expect(own.headers['cache-control']).toBe('private, no-store');
    expect(own.rawPayload.equals(PNG)).toBe(true);
    const viewer = await createMember(svc, { role: 'viewer', orgId: m.orgId });
    const refused = await svc.app.inject({ method: 'GET', url, headers: viewer.headers });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 7, message: 'missing permission storage.read' });
    const anon = await svc.app.inject({ method: 'GET', url });
    expect(anon.statusCode).toBe(404);
    const other = await createMember(svc);
    const foreign = await svc.app.inject({ method: 'GET', url, headers: other.headers });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().code).toBe(5);
    const missing = await svc.app.inject({ method: 'GET', url: `/storage/files/${newId('file')}` });
    expect(missing.statusCode).toBe(404);
    const malformed = await svc.app.inject({ method: 'GET', url: '/storage/files/fil_missing' });
    expect(malformed.statusCode).toBe(400);
  });
});
