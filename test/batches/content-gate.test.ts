import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_BUILD_WAIT_MS } from '../../src/modules/batches/content-gate.js';
import { useTestService } from '../helpers/harness.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';

/**
 * At most two batch contents are built at once per process, and a build that waits longer
 * than CONTENT_BUILD_WAIT_MS for its turn is answered 503 (docs/batches.md, "Content and
 * `ipfs_url`"). Builds are held here by a lock on action_logs, which every build reads.
 */
const PER_BATCH = 2;
const svc = useTestService({ env: { BATCH_MAX_ACTIONS: String(PER_BATCH) } });
const { get } = svc;

let owner: EoaSigner;
/** Three sealed batches, none of whose contents was asked for yet. */
let batches: string[];

async function settle() {
  for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
}

beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  const templateId = await createTemplate(svc, owner.orgId);
  await settle(); // opens batch 1
  const ids = new Set<string>();
  let nonce = 0;
  for (let b = 0; b < 3; b++) {
    const actions = [];
    for (let i = 0; i < PER_BATCH; i++) {
      actions.push(
        await signEoa(svc, owner, {
          name: 'mint',
          params: { template_id: templateId },
          nonce: nonce++,
        }),
      );
    }
    const res = await svc.post('/ebus/actions/batch', { actions }, owner.headers);
    expect(res.statusCode, res.body).toBe(200);
    for (const r of res.json().results as { action: { batch_id: string } }[]) {
      ids.add(r.action.batch_id);
    }
    await settle(); // seals it, opens the next
  }
  batches = [...ids];
  expect(batches).toHaveLength(3);
  for (const id of batches) expect((await get(`/batches/${id}`)).json().hash).toMatch(/^0x/);
});

/** Runs `body` while another connection holds action_logs exclusively. */
async function withActionRowsLocked(body: (waiting: () => Promise<number>) => Promise<void>) {
  const locker = new pg.Client({ connectionString: svc.database.url });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE action_logs IN ACCESS EXCLUSIVE MODE');
    const waiting = async () =>
      Number(
        (
          await locker.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
              WHERE c.relname = 'action_logs' AND NOT l.granted`,
          )
        ).rows[0]!.n,
      );
    await body(waiting);
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
  }
}

describe('GET /batches/{batchId}/content builds', () => {
  it('answers 503 code 14 with Retry-After when two builds hold their slots past the wait', async () => {
    await withActionRowsLocked(async (waiting) => {
      const held = batches.slice(0, 2).map((id) => get(`/batches/${id}/content`));
      for (let i = 0; i < 200 && (await waiting()) < 2; i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(await waiting()).toBe(2);

      const started = Date.now();
      const third = await Promise.race([
        get(`/batches/${batches[2]}/content`),
        new Promise<null>((r) => setTimeout(() => r(null), CONTENT_BUILD_WAIT_MS + 3_000)),
      ]);
      expect(third, 'the third build was not refused; it waits for the lock').not.toBeNull();
      expect(Date.now() - started).toBeGreaterThanOrEqual(CONTENT_BUILD_WAIT_MS - 50);
      expect(third!.statusCode).toBe(503);
      expect(third!.headers['retry-after']).toBe('1');
      expect(third!.json()).toEqual({
        code: 14,
        message: 'too many batch contents are being built; retry later',
        details: { retry_after_seconds: 1 },
      });
      // Still waiting, never started: the refused build read no row.
      expect(await waiting()).toBe(2);
      return void Promise.allSettled(held);
    });
    // The lock gone, the held builds and the refused one are answered.
    for (const id of batches) {
      const res = await get(`/batches/${id}/content`);
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('lets a cache keep a content a few seconds, never as immutable', async () => {
    const res = await get(`/batches/${batches[0]}/content`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=5');
  });
});
