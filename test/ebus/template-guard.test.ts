import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';

/**
 * The group statement's template guard (src/modules/ebus/repo/group-write.ts) looks up only
 * the templates its group read, by primary key, and sends none of their faces: another
 * organization's many large templates cost a group nothing (docs/ebus.md, "Inside").
 */
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

interface Sent {
  text: string;
  values: unknown[];
}

/** The group statements the service sends while `fn` runs (text and parameters). */
async function groupStatementsDuring(fn: () => Promise<void>): Promise<Sent[]> {
  const sent: Sent[] = [];
  // Every query of the pool ends in `Client.prototype.query` (src/db/traced-queries.ts).
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as { text?: unknown; values?: unknown[] } | string;
    const text = typeof q === 'string' ? q : q.text;
    if (typeof text === 'string' && text.includes('templates_unchanged AS')) {
      const values = (typeof q === 'string' ? args[1] : q.values) as unknown[] | undefined;
      sent.push({ text, values: values ?? [] });
    }
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return sent;
}

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Plans?: PlanNode[] };
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

describe('the group statement and other organizations’ large templates', () => {
  it('reads only its own templates, by primary key, and never sends their faces', async () => {
    // Another organization holds two thousand templates with large faces.
    const other = await createSigner(svc, { role: 'owner' });
    await svc.container.db.execute(sql`
      INSERT INTO templates (id, organization_id, name, description, category, faces, actions,
        custom_schema, is_public, created_at, updated_at)
      SELECT 'template_bulk' || g, ${other.orgId}, 'Bulk', '', '',
        jsonb_build_array(jsonb_build_object('id', 'f', 'url', 'https://x.test/f.png',
          'config', '{}'::jsonb, 'content', repeat(md5(g::text), 64))),
        '{mint}', NULL, true, now(), now()
      FROM generate_series(1, 2000) g`);
    await svc.container.db.execute(sql`ANALYZE templates`);

    // This organization's template has faces near the cap, with a mark to look for.
    const owner = await createSigner(svc, { role: 'owner' });
    await fund(svc, owner.orgId, ACTION_FEE * 100n);
    const mark = 'FACE-MARK-7f3a';
    const faces = [
      { id: 'front', url: 'https://x.test/f.png', config: {}, content: mark.repeat(4000) },
    ];
    const templateId = await createTemplate(svc, owner.orgId, { faces });

    const sent = await groupStatementsDuring(async () => {
      for (let nonce = 0; nonce < 8; nonce++) {
        const body = await signEoa(svc, owner, {
          name: 'mint',
          params: { template_id: templateId },
          nonce,
        });
        const res = await svc.app.inject({
          method: 'POST',
          url: '/ebus/execute',
          headers: owner.headers,
          payload: body,
        });
        expect(res.statusCode, res.body).toBe(200);
      }
    });
    expect(sent.length).toBeGreaterThanOrEqual(8);

    // Objects carry no faces: a mark in the parameters would be the template guard's.
    const carrying = sent.filter((s) => s.values.some((v) => String(v).includes(mark)));
    expect.soft(carrying.length, 'group statements whose parameters carry the faces').toBe(0);

    // As the server plans it, with these parameters: no sequential scan of templates.
    const client = new pg.Client({ connectionString: svc.config.databaseUrl! });
    await client.connect();
    try {
      const last = sent[sent.length - 1]!;
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${last.text}`,
        last.values,
      );
      if (process.env.SHOW_PLAN) {
        const text = await client.query(`EXPLAIN ${last.text}`, last.values);
        console.log(text.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'));
      }
      const onTemplates = nodes(rows[0]!['QUERY PLAN'][0].Plan).filter(
        (n) => n['Relation Name'] === 'templates',
      );
      expect.soft(onTemplates.map((n) => n['Node Type'])).toEqual(['Index Scan']);
    } finally {
      await client.end();
    }
  });
});
