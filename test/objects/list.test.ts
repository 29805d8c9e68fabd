import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/http/app.js';
import type { Container } from '../../src/container.js';
import { newId } from '../../src/lib/ids.js';
import {
  and,
  dateFilters,
  keysetCondition,
  listQueryProperties,
  orderBy,
  pageOf,
  parseList,
  prefixMatch,
  type ListQuery,
  type ListSpec,
} from '../../src/lib/list.js';

import { useTestService } from '../helpers/harness.js';

type Row = { id: string; subject: string; created_at: Date };

const spec: ListSpec = {
  sortable: {
    when_created: { column: sql`created_at`, type: 'timestamp' },
    name: { column: sql`subject`, type: 'text' },
  },
  defaultSort: 'when_created',
  idColumn: sql`id`,
};

/** A list endpoint over the outbox table, built only from the shared list helper. */
function routes(app: App, c: Container) {
  app.get(
    '/test/list',
    { config: { auth: 'none' }, schema: { querystring: Type.Object(listQueryProperties) } },
    async (req) => {
      const q = req.query as ListQuery;
      const p = parseList(q, spec);
      const where = and([
        sql`recipient = 'list@test'`,
        keysetCondition(p),
        q.autocomplete ? prefixMatch(sql`subject`, q.autocomplete) : undefined,
        ...dateFilters(q, sql`created_at`),
      ]);
      const { rows } = await c.db.execute<Row>(
        sql`SELECT id, subject, created_at FROM outbox_messages WHERE ${where} ${orderBy(p)} LIMIT ${p.limit + 1}`,
      );
      const page = pageOf(
        rows,
        p,
        (r) => (p.sortBy === 'name' ? r.subject : r.created_at),
        (r) => r.id,
      );
      return { items: page.items.map((r) => r.id), next: page.next, has_more: page.has_more };
    },
  );
}

const base = new Date('2026-03-01T00:00:00.000Z').getTime();

async function insert(i: number, subject = `s${String(i).padStart(3, '0')}`) {
  await svc.container.db
    .execute(sql`INSERT INTO outbox_messages (id, channel, recipient, kind, subject, body, created_at)
    VALUES (${newId('message')}, 'email', 'list@test', 'test', ${subject}, '', ${new Date(base + (i % 10) * 1000)})`);
}

const svc = useTestService({ extraRoutes: routes });
const { get } = svc;
beforeAll(async () => {
  // Ten rows share each timestamp, so the id tie-breaker matters.
  for (let i = 0; i < 50; i++) await insert(i);
});

async function walk(url: string, onPage?: () => Promise<void>) {
  const seen: string[] = [];
  let next = '';
  for (let guard = 0; guard < 100; guard++) {
    const res = await get(`${url}${next ? `&next=${next}` : ''}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    seen.push(...body.items);
    if (!body.has_more) {
      expect(body.next).toBe('');
      break;
    }
    next = body.next;
    await onPage?.();
  }
  return seen;
}

describe('list helper', () => {
  it('pages through every row exactly once in both orders', async () => {
    const desc = await walk('/test/list?limit=7');
    expect(desc).toHaveLength(50);
    expect(new Set(desc).size).toBe(50);
    const asc = await walk('/test/list?limit=7&order=asc');
    expect(asc).toEqual([...desc].reverse());
  });

  it('stays stable while rows are inserted between pages', async () => {
    const before = await walk('/test/list?limit=50&order=asc');
    let n = 1000;
    const seen = await walk(
      '/test/list?limit=6&order=asc&when_created[$lte]=2026-03-01T00:00:09.000Z',
      () => insert(n++),
    );
    // Rows inserted meanwhile sort by their (older or equal) time, yet nothing repeats.
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  it('sorts by an allow-listed field and refuses others with 400 code 3', async () => {
    const byName = await walk('/test/list?limit=9&sortBy=name&order=asc&autocomplete=s0');
    expect(byName.length).toBeGreaterThan(0);
    const bad = await get('/test/list?sortBy=body');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe(3);
  });

  it('filters on creation time', async () => {
    const res = await get(
      '/test/list?limit=100&when_created[$gte]=2026-03-01T00:00:05.000Z&when_created[$lt]=2026-03-01T00:00:06.000Z',
    );
    expect(res.json().items.length).toBeGreaterThanOrEqual(5);
    const bad = await get('/test/list?when_created[$gt]=yesterday');
    expect(bad.statusCode).toBe(400);
  });

  it('refuses malformed cursors, a cursor of another order and out-of-range limits', async () => {
    for (const url of [
      '/test/list?next=%%%',
      '/test/list?next=bm90LWpzb24',
      `/test/list?next=${Buffer.from('{"s":"when_created","o":"desc","v":"x","i":"y"}').toString('base64url')}`,
      '/test/list?limit=0',
      '/test/list?limit=101',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().code).toBe(3);
    }
    const first = (await get('/test/list?limit=2')).json();
    const mismatch = await get(`/test/list?limit=2&order=asc&next=${first.next}`);
    expect(mismatch.statusCode).toBe(400);
  });
});
