import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTION_FEE, createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import { createMember } from '../helpers/fixtures.js';
import { spawnService } from '../helpers/processes.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * Idempotency across processes: two built services (dist/) on one database answer one
 * `Idempotency-Key` and one signed action as one request, whichever process each retry
 * reaches.
 */
let helper: TestService;
const children: ChildProcess[] = [];
let urls: string[] = [];

beforeAll(async () => {
  helper = await startTestService();
  for (let i = 0; i < 2; i++) {
    const started = await spawnService(helper);
    children.push(started.child);
    urls.push(started.url);
  }
}, 120_000);
afterAll(async () => {
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => {
        const exited = new Promise((resolve) => c.once('exit', resolve));
        c.kill('SIGTERM');
        return exited;
      }),
  );
  await helper.stop();
  urls = [];
});

async function send(url: string, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: await res.text(),
    replayed: res.headers.get('idempotent-replayed'),
  };
}

describe('two processes on one database', () => {
  it('answer 40 concurrent requests with one key as one request', async () => {
    const m = await createMember(helper, { role: 'owner' });
    const body = { name: 'across-processes' };
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(urls[i % 2]!, '/templates', { ...m.headers, 'idempotency-key': 'k-1' }, body),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(39);
    const { rows } = await helper.container.db.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM templates WHERE organization_id = ${m.orgId}`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it("answer a signed action applied by one with the other's replay", async () => {
    const owner = await createSigner(helper, { role: 'owner' });
    await fund(helper, owner.orgId, ACTION_FEE * 5n);
    const templateId = await createTemplate(helper, owner.orgId);
    const action = await signEoa(helper, owner, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: 0,
    });
    const first = await send(urls[0]!, '/ebus/execute', owner.headers, action);
    expect(first.status, first.body).toBe(200);
    const again = await send(urls[1]!, '/ebus/execute', owner.headers, action);
    expect(again.status, again.body).toBe(200);
    expect(again.replayed).toBe('true');
    expect(JSON.parse(again.body)).toEqual(JSON.parse(first.body));
  });
});
