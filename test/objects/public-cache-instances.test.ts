import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { insertObject, insertTemplate, putTemplate } from '../helpers/objects.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * A template made private on one instance leaves every instance's public list at once
 * (docs/objects.md, "The public list"). Instance A keeps its answers a minute, so without the
 * switch's notice (migration 0043, src/notices.ts) it would answer the template's objects for
 * that long; B makes the switches. Also: A forgets its answers when its listening connection
 * is lost, and hears the switches made after it listens again.
 */
const BOUND_MS = 2_000;

let a: TestService;
let b: TestService;
let owner: TestMember;

beforeAll(async () => {
  a = await startTestService({ env: { PUBLIC_LIST_CACHE_MS: '60000' } });
  b = await startTestService({ databaseUrl: a.config.databaseUrl!, now: a.clock.now() });
  owner = await createMember(a, { role: 'owner' });
});
afterAll(async () => {
  await b.stop();
  await a.stop();
});

/** A public template with one object, and A's public list URL that shows it (its own entry). */
async function publicObject() {
  const templateId = await insertTemplate(a, owner.orgId, { isPublic: true });
  const collectionId = newId('object');
  const objectId = await insertObject(a, { templateId, collectionId });
  const url = `/public/objects?limit=50&include_faces=true&collection_id=${collectionId}`;
  return { templateId, collectionId, objectId, url };
}

const listOnA = async (url: string) => {
  const res = await a.app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};

/** A's answer to `url` once it no longer names `objectId`, within `ms`; else its last one. */
async function withoutWithin(url: string, objectId: string, ms: number): Promise<string> {
  const deadline = performance.now() + ms;
  for (;;) {
    const body = await listOnA(url);
    if (!body.includes(objectId) || performance.now() >= deadline) return body;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A's answer names the object, and is cached: an object added now does not show. */
async function cachedOnA(o: Awaited<ReturnType<typeof publicObject>>): Promise<void> {
  expect(await listOnA(o.url)).toContain(o.objectId);
  const later = await insertObject(a, { templateId: o.templateId, collectionId: o.collectionId });
  expect(await listOnA(o.url)).not.toContain(later);
}

const switchOnB = (templateId: string, isPublic: boolean) =>
  putTemplate(b, owner.headers, templateId, { is_public: isPublic });

describe('a template made private on instance B', () => {
  it(`leaves instance A's cached public list within ${BOUND_MS} ms`, async () => {
    const o = await publicObject();
    await cachedOnA(o);
    await switchOnB(o.templateId, false);
    const body = await withoutWithin(o.url, o.objectId, BOUND_MS);
    expect(JSON.parse(body)).toMatchObject({ objects: [], faces: [] });
    expect(body).not.toContain(o.templateId);
  });
});

describe("A's listening connection", () => {
  it('when it is lost, A forgets its answers, listens again and hears what follows', async () => {
    const o = await publicObject();
    await cachedOnA(o);
    // Made private without a notice (the trigger off within the one transaction): A cannot
    // hear of it and answers from its memory.
    await a.container.db.transaction(async (tx) => {
      await tx.execute(sql`ALTER TABLE templates DISABLE TRIGGER templates_made_private`);
      await tx.execute(sql`UPDATE templates SET is_public = false WHERE id = ${o.templateId}`);
      await tx.execute(
        sql`UPDATE objects SET is_public = false WHERE template_id = ${o.templateId}`,
      );
      await tx.execute(sql`ALTER TABLE templates ENABLE TRIGGER templates_made_private`);
    });
    expect(await listOnA(o.url)).toContain(o.objectId);

    // The listening connections, ended as a restart or a failover would end them.
    const listens = a.container.notices.listens;
    await a.container.db.execute(sql`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'ons-listen'`);
    // It may have missed notices: it forgets its answers.
    expect(await withoutWithin(o.url, o.objectId, BOUND_MS)).not.toContain(o.objectId);

    // It listens again.
    const deadline = performance.now() + 10_000;
    while (a.container.notices.listens !== listens + 1 || !a.container.notices.listening) {
      expect(performance.now(), 'A listens again within 10 s').toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 20));
    }

    // And hears the switches made after: public again (A lists it, cached), private again.
    await switchOnB(o.templateId, true);
    await cachedOnA(o);
    await switchOnB(o.templateId, false);
    expect(await withoutWithin(o.url, o.objectId, BOUND_MS)).not.toContain(o.objectId);
  });
});
