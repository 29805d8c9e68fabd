import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyService, IdempotencySweeper } from '../../src/modules/idempotency/index.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * `Idempotency-Key` on creating POSTs (docs/api.md, "Idempotent requests"): the same key
 * and request within 24 hours answers the first answer byte for byte with
 * `Idempotent-Replayed: true`; another request with the key is 400 code 3; keys are scoped
 * to the caller's organization, its credential and the route; they live in PostgreSQL (every instance and
 * a restart see them).
 */
let svc: TestService;
let owner: TestMember;

beforeAll(async () => {
  svc = await startTestService();
  owner = await createMember(svc, { role: 'owner' });
});
afterAll(async () => {
  await svc.stop();
});

let seq = 0;
const freshKey = () => `key-${Date.now()}-${++seq}`;
/** How a key is stored: its SHA-256 only. */
const stored = (key: string) => createHash('sha256').update(key).digest('hex');

function post(
  s: TestService,
  url: string,
  headers: Record<string, string>,
  payload: Record<string, unknown>,
  key?: string,
) {
  return s.app.inject({
    method: 'POST',
    url,
    headers: key === undefined ? headers : { ...headers, 'idempotency-key': key },
    payload,
  });
}

/** A new session of `m`'s wallet at the clock's time: its headers. */
async function signedInAgain(m: TestMember): Promise<Record<string, string>> {
  const tokens = await svc.container.sessions.issue(svc.container.db, {
    walletId: m.walletId,
    orgId: m.orgId,
    device: 'test',
  });
  return { authorization: `Bearer ${tokens.access_token}` };
}

async function templatesNamed(orgId: string, name: string): Promise<number> {
  const { rows } = await svc.container.db.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${orgId} AND name = ${name}`,
  );
  return rows[0]!.n;
}

describe('Idempotency-Key on a creating POST', () => {
  it('answers a retry with the first answer byte for byte and creates one record', async () => {
    const key = freshKey();
    const body = { name: `t-${key}` };
    const first = await post(svc, '/templates', owner.headers, body, key);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    svc.clock.advance(60_000);
    const again = await post(svc, '/templates', owner.headers, body, key);
    expect(again.statusCode).toBe(first.statusCode);
    expect(again.body).toBe(first.body);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await templatesNamed(owner.orgId, body.name)).toBe(1);
  });

  it('keeps neither the key nor a secret of the answer readable in the database', async () => {
    const key = freshKey();
    const body = { name: 'sealed', permissions: [{ resource: 'objects', crud: { read: true } }] };
    const first = await post(svc, '/api-keys', owner.headers, body, key);
    expect(first.statusCode, first.body).toBe(200);
    const secret = first.json().secret as string;
    expect(secret).toMatch(/^onsk_/);
    const { rows } = await svc.container.db.execute<{ key: string; body: string }>(
      sql`SELECT key, body FROM idempotency_keys WHERE key = ${stored(key)}`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.body).not.toContain(secret);
    expect(rows[0]!.body).not.toContain('sealed');
    const again = await post(svc, '/api-keys', owner.headers, body, key);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('creates a record per request without a key', async () => {
    const body = { name: `t-nokey-${freshKey()}` };
    expect((await post(svc, '/templates', owner.headers, body)).statusCode).toBe(200);
    expect((await post(svc, '/templates', owner.headers, body)).statusCode).toBe(200);
    expect(await templatesNamed(owner.orgId, body.name)).toBe(2);
  });

  it('refuses the key with another body, 400 code 3 naming Idempotency-Key', async () => {
    const key = freshKey();
    expect((await post(svc, '/templates', owner.headers, { name: 'a' }, key)).statusCode).toBe(200);
    const other = await post(svc, '/templates', owner.headers, { name: 'b' }, key);
    expect(other.statusCode).toBe(400);
    expect(other.json()).toMatchObject({
      code: 3,
      details: { fields: [{ field: 'Idempotency-Key' }] },
    });
    expect(other.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses a key that is too long, empty or not visible ASCII', async () => {
    for (const key of ['k'.repeat(256), '', 'clé']) {
      const res = await post(svc, '/templates', owner.headers, { name: 'x' }, key);
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(res.json().code).toBe(3);
      expect(res.body.toLowerCase()).toContain('idempotency-key');
    }
    const longest = await post(svc, '/templates', owner.headers, { name: 'x' }, 'k'.repeat(255));
    expect(longest.statusCode).toBe(200);
  });

  it('keeps a refusal the route gave (4xx) and replays it', async () => {
    const key = freshKey();
    const bad = { name: 'bad', custom_schema: { type: 'no-such-type' } };
    const first = await post(svc, '/templates', owner.headers, bad, key);
    expect(first.statusCode).toBe(400);
    const again = await post(svc, '/templates', owner.headers, bad, key);
    expect(again.statusCode).toBe(400);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('keeps nothing for a request refused before it ran (its credential or its schema)', async () => {
    const key = freshKey();
    const anon = await svc.app.inject({
      method: 'POST',
      url: '/templates',
      headers: { 'idempotency-key': key },
      payload: { name: 'x' },
    });
    expect(anon.statusCode).toBe(401);
    const invalidBody = await post(svc, '/templates', owner.headers, { nope: 1 }, key);
    expect(invalidBody.statusCode).toBe(400);
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${stored(key)}`,
    );
    expect(rows[0]!.n).toBe(0);
    // The key is still free for a valid request, which takes it.
    expect((await post(svc, '/templates', owner.headers, { name: 'x' }, key)).statusCode).toBe(200);
    const { rows: after } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${stored(key)}`,
    );
    expect(after[0]!.n).toBe(1);
  });

  it('never replays across organizations or routes: the same key is independent there', async () => {
    const key = freshKey();
    const body = { name: `shared-${key}` };
    const mine = await post(svc, '/templates', owner.headers, body, key);
    const stranger = await createMember(svc, { role: 'owner' });
    const theirs = await post(svc, '/templates', stranger.headers, body, key);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().id).not.toBe(mine.json().id);
    expect(await templatesNamed(stranger.orgId, body.name)).toBe(1);
    // Another route with the same key in the same organization runs on its own.
    const support = await post(
      svc,
      '/support',
      owner.headers,
      { title: 'Help', content: 'please' },
      key,
    );
    expect(support.statusCode, support.body).toBe(200);
    expect(support.headers['idempotent-replayed']).toBeUndefined();
    // Another member of the same organization has keys of its own (the scope is the
    // credential: test/idempotency/credential-scope.test.ts).
    const colleague = await createMember(svc, { role: 'admin', orgId: owner.orgId });
    const same = await post(svc, '/templates', colleague.headers, body, key);
    expect(same.headers['idempotent-replayed']).toBeUndefined();
    expect(same.json().id).not.toBe(mine.json().id);
  });

  it('answers 100 concurrent identical requests with one record and 100 identical bodies', async () => {
    const key = freshKey();
    const body = { name: `burst-${key}` };
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => post(svc, '/templates', owner.headers, body, key)),
    );
    expect(answers.map((a) => a.statusCode)).toEqual(Array(100).fill(200));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(99);
    expect(await templatesNamed(owner.orgId, body.name)).toBe(1);
  });

  it('is shared by two instances on one database, and survives a restart', async () => {
    const other = await startTestService({
      databaseUrl: svc.config.databaseUrl!,
      now: svc.clock.now(),
    });
    try {
      const key = freshKey();
      const body = { name: `two-${key}` };
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(i % 2 ? other : svc, '/templates', owner.headers, body, key),
        ),
      );
      expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((a) => a.body)).size).toBe(1);
      expect(await templatesNamed(owner.orgId, body.name)).toBe(1);

      // A key used before `other` started, answered by it (a restarted process).
      const k2 = freshKey();
      const msg = { title: 'Once', content: k2 };
      const first = await post(svc, '/support', owner.headers, msg, k2);
      expect(first.statusCode, first.body).toBe(200);
      const again = await post(other, '/support', owner.headers, msg, k2);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
    } finally {
      await other.stop();
    }
  });

  it('forgets a key after 24 hours, and the sweeper deletes it', async () => {
    const key = freshKey();
    const body = { name: `expiring-${key}` };
    const first = await post(svc, '/templates', owner.headers, body, key);
    svc.clock.advance(24 * 60 * 60 * 1000 - 1000);
    // The owner signed in anew at the clock's time (an access token does not last a day).
    let me = await signedInAgain(owner);
    expect((await post(svc, '/templates', me, body, key)).body).toBe(first.body);
    svc.clock.advance(2000);
    me = await signedInAgain(owner);
    const { rows: kept } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${stored(key)}`,
    );
    expect(kept[0]!.n).toBe(1);
    const sweeper = new IdempotencySweeper(svc.container.db, svc.clock, svc.container.logger);
    expect(await sweeper.sweep()).toBeGreaterThan(0);
    const { rows } = await svc.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = ${stored(key)}`,
    );
    expect(rows[0]!.n).toBe(0);
    const later = await post(svc, '/templates', me, body, key);
    expect(later.statusCode).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await templatesNamed(owner.orgId, body.name)).toBe(2);
  });
});

describe('a first request still running', () => {
  const id = () => ({ scope: 'org:test', route: 'POST /things', key: freshKey() });

  it('makes a retry wait for its answer, then replays it', async () => {
    const keys = new IdempotencyService(svc.container.db, svc.clock, { waitMs: 2000 });
    const k = id();
    expect(await keys.begin(k, 'h')).toEqual({ kind: 'run' });
    const waiting = keys.begin(k, 'h');
    await new Promise((r) => setTimeout(r, 100));
    await keys.complete(k, 'h', { status: 200, headers: {}, body: '{"ok":true}' });
    expect(await waiting).toEqual({
      kind: 'replay',
      answer: { status: 200, headers: {}, body: '{"ok":true}' },
    });
  });

  it('a retry waiting on a first request of this process asks the database nothing meanwhile', async () => {
    let queries = 0;
    const counted = {
      execute: ((q: Parameters<typeof svc.container.db.execute>[0]) => {
        queries++;
        return svc.container.db.execute(q);
      }) as typeof svc.container.db.execute,
    };
    const keys = new IdempotencyService(counted, svc.clock, { waitMs: 5000 });
    const k = id();
    expect(await keys.begin(k, 'h')).toEqual({ kind: 'run' });
    const before = queries;
    const waiting = keys.begin(k, 'h');
    await new Promise((r) => setTimeout(r, 600));
    // One claim and one look before it began to wait; none for the 600 ms it waited.
    expect(queries - before).toBe(2);
    await keys.complete(k, 'h', { status: 201, headers: {}, body: '{}' });
    expect((await waiting).kind).toBe('replay');
  });

  it('answers 409 code 10 once the bound passes, and lets a stale one be taken over', async () => {
    const a = new IdempotencyService(svc.container.db, svc.clock, { waitMs: 200 });
    const b = new IdempotencyService(svc.container.db, svc.clock, { waitMs: 200 });
    const k = id();
    expect(await a.begin(k, 'h')).toEqual({ kind: 'run' });
    await expect(b.begin(k, 'h')).rejects.toMatchObject({ code: 10 });
    await expect(b.begin(k, 'other')).rejects.toMatchObject({ code: 3 });
    // Its process died: after two minutes without an answer a retry takes the key, and
    // another request with the same key is still refused as such.
    svc.clock.advance(2 * 60 * 1000 + 1);
    await expect(b.begin(k, 'other')).rejects.toMatchObject({ code: 3 });
    expect(await b.begin(k, 'h')).toEqual({ kind: 'run' });
    // A released key runs again.
    await b.release(k, 'h');
    expect(await a.begin(k, 'h')).toEqual({ kind: 'run' });
  });

  it('is announced on ons_idempotency once answered or given back, by a hash of scope, route and key', async () => {
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: svc.config.databaseUrl! });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query('LISTEN ons_idempotency');
    try {
      // Marked running every 10 ms.
      const keys = new IdempotencyService(svc.container.db, svc.clock, { staleMs: 40 });
      const [answered, given] = [id(), id()];
      expect(await keys.begin(answered, 'h')).toEqual({ kind: 'run' });
      expect(await keys.begin(given, 'h')).toEqual({ kind: 'run' });
      await new Promise((r) => setTimeout(r, 50));
      await keys.complete(answered, 'h', { status: 201, headers: {}, body: '{}' });
      await keys.release(given, 'h');
      // Taken again once expired: no notice until it is given back.
      svc.clock.advance(24 * 60 * 60 * 1000 + 1);
      expect(await keys.begin(answered, 'h')).toEqual({ kind: 'run' });
      await keys.release(answered, 'h');
      await listener.query(`SELECT pg_notify('ons_idempotency', 'end')`);
      while (!heard.includes('end')) await new Promise((r) => setTimeout(r, 5));
      const notice = (k: { scope: string; route: string; key: string }) =>
        createHash('sha256')
          .update(`${k.scope}\n${k.route}\n${stored(k.key)}`)
          .digest('hex');
      expect(heard).toEqual([notice(answered), notice(given), notice(answered), 'end']);
    } finally {
      await listener.end();
    }
  });

  it('a slow first request of a live process is not taken over: its process marks it running', async () => {
    const opts = { waitMs: 200, staleMs: 400 };
    const a = new IdempotencyService(svc.container.db, svc.clock, opts);
    const b = new IdempotencyService(svc.container.db, svc.clock, opts);
    const k = id();
    expect(await a.begin(k, 'h')).toEqual({ kind: 'run' });
    // Long past `staleMs` by the clock, while `a` still runs it and marks it every 100 ms.
    svc.clock.advance(10 * 60 * 1000);
    await new Promise((r) => setTimeout(r, 300));
    await expect(b.begin(k, 'h')).rejects.toMatchObject({ code: 10 });
    await a.complete(k, 'h', { status: 201, headers: {}, body: '{"once":true}' });
    expect(await b.begin(k, 'h')).toEqual({
      kind: 'replay',
      answer: { status: 201, headers: {}, body: '{"once":true}' },
    });
  });
});
