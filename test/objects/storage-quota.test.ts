import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { form } from '../helpers/multipart.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * STORAGE_QUOTA_BYTES bounds what one organization's files take (docs/objects.md, "Files"):
 * uploads are rate-limited, but without a quota one organization could fill the disk the
 * database shares. Here 200 bytes: two 70-byte PNGs fit, a third does not.
 */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
/** Another 70 bytes, so its blob is new: a refused upload must store nothing. */
const PNG_2 = Buffer.from(PNG);
PNG_2.writeUInt8(PNG_2.readUInt8(PNG_2.length - 13) ^ 1, PNG_2.length - 13); // a CRC bit: still a PNG

let svc: TestService;
let dir: string;
let a: TestMember;
let b: TestMember;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'ons-quota-'));
  svc = await startTestService({ env: { STORAGE_DIR: dir, STORAGE_QUOTA_BYTES: '200' } });
  a = await createMember(svc, { role: 'member' });
  b = await createMember(svc, { role: 'member' });
});
afterAll(async () => {
  await svc?.stop();
  await rm(dir, { recursive: true, force: true });
});

const upload = (m: TestMember, data: Buffer) => {
  const f = form([{ name: 'file', filename: 'x.png', type: 'image/png', data }]);
  return svc.app.inject({
    method: 'POST',
    url: '/storage/upload',
    headers: { ...m.headers, 'content-type': f.type },
    payload: f.payload,
  });
};
const blobs = async (): Promise<number> => {
  let n = 0;
  for (const top of await readdir(dir)) {
    for (const sub of await readdir(path.join(dir, top)))
      n += (await readdir(path.join(dir, top, sub))).length;
  }
  return n;
};
const filesOf = async (orgId: string) =>
  (
    await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM files WHERE organization_id = ${orgId}`,
    )
  ).rows[0]!.n;

describe('STORAGE_QUOTA_BYTES', () => {
  it("refuses an upload past the organization's quota with 429 code 8, storing nothing", async () => {
    expect(PNG.length).toBe(70);
    for (let i = 0; i < 2; i++) expect((await upload(a, PNG)).statusCode).toBe(200);
    const before = await blobs();
    const over = await upload(a, PNG_2);
    expect(over.statusCode, over.body).toBe(429);
    expect(over.json()).toMatchObject({ code: 8, details: { quota_bytes: 200 } });
    expect(await filesOf(a.orgId)).toBe(2);
    expect(await blobs()).toBe(before);
    // Another organization has its own quota.
    expect((await upload(b, PNG_2)).statusCode).toBe(200);
  });

  it('counts concurrent uploads one by one: never past the quota', async () => {
    const c = await createMember(svc, { role: 'member' });
    const answers = await Promise.all(Array.from({ length: 6 }, () => upload(c, PNG)));
    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    expect(await filesOf(c.orgId)).toBe(2);
    const { rows } = await svc.container.db.execute<{ bytes: string }>(
      sql`SELECT bytes::text FROM storage_usage WHERE organization_id = ${c.orgId}`,
    );
    expect(rows[0]!.bytes).toBe('140');
  });
});
