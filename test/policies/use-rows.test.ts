/**
 * A policy's use row as the group statement writes it (docs/policies.md, "How the caps stay
 * exact"): the current bucket and the rest of the window in scalars, the ring rewritten only
 * when the current bucket rolls over. Random runs of groups (late buckets, same buckets, small
 * and large jumps) are written by the statement's own SQL and compared with a plain model of
 * the rolling window: the statement's `ok`, the row's `cur + hist` and the ring the service
 * reads back must all agree with it after every group.
 */
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { BUCKETS_PER_WINDOW, bucketMs, windowUse } from '../../src/modules/policies/gate.js';
import { policyUseCte, readUsage } from '../../src/modules/policies/repo.js';
import { createSigner } from '../helpers/ebus.js';
import { startTestService, type TestService } from '../helpers/service.js';

let svc: TestService;
let orgId: string;

beforeAll(async () => {
  svc = await startTestService();
  orgId = (await createSigner(svc)).orgId;
});
afterAll(async () => {
  await svc?.stop();
});

async function newPolicy(): Promise<string> {
  const id = newId('policy');
  const now = svc.clock.now();
  await svc.container.db.execute(sql`INSERT INTO policies (id, organization_id, name,
      target_type, period, max_actions, created_at, updated_at)
    VALUES (${id}, ${orgId}, 'use rows', 'organization', 'minute', 1000000, ${now}, ${now})`);
  await svc.container.db.execute(sql`INSERT INTO policy_usage (policy_id, organization_id)
    VALUES (${id}, ${orgId})`);
  return id;
}

class Refused extends Error {}

/**
 * One group's use of one policy, written as the group statement writes it, at a chosen
 * bucket instead of the database's clock; as there, nothing is kept when the cap does not
 * hold (the statement's guard aborts it).
 */
async function write(policyId: string, bucket: number, spent: bigint, capWei: bigint) {
  const width = bucketMs('minute');
  const uses = [
    {
      org_id: orgId,
      policy_id: policyId,
      bucket_ms: width,
      spent: spent.toString(),
      actions: 1,
      cap_wei: capWei.toString(),
      cap_actions: null,
    },
  ];
  try {
    await svc.container.db.transaction(async (tx) => {
      const { rows } = await tx.execute<{ ok: boolean }>(sql`
        WITH debit AS (SELECT ${orgId}::text AS id),
          policy_use AS (${policyUseCte(uses, sql`debit`, sql`${bucket * width}::bigint`)})
        SELECT ok FROM policy_use`);
      expect(rows).toHaveLength(1);
      if (!rows[0]!.ok) throw new Refused();
    });
    return true;
  } catch (err) {
    if (err instanceof Refused) return false;
    throw err;
  }
}

async function row(policyId: string) {
  const { rows } = await svc.container.db.execute<{ cur: string; total: string; n: string }>(sql`
    SELECT cur_bucket::text AS cur, (cur_spent + hist_spent)::text AS total,
      (cur_actions + hist_actions)::text AS n
    FROM policy_usage WHERE policy_id = ${policyId}`);
  return { cur: Number(rows[0]!.cur), total: BigInt(rows[0]!.total), actions: Number(rows[0]!.n) };
}

/** The model: each use counted at the latest bucket seen so far, summed over the window. */
class Model {
  uses: { bucket: number; spent: bigint }[] = [];
  current = -1;
  /** The model with one more use. */
  with(bucket: number, spent: bigint): Model {
    const next = new Model();
    next.current = Math.max(this.current, bucket);
    next.uses = [...this.uses, { bucket: next.current, spent }];
    return next;
  }
  window() {
    const inside = this.uses.filter((u) => u.bucket >= this.current - BUCKETS_PER_WINDOW);
    return { spent: inside.reduce((s, u) => s + u.spent, 0n), actions: inside.length };
  }
}

describe("a policy's use row", () => {
  it('agrees with the rolling window after every group, late and rolling groups included', async () => {
    const step = fc.record({
      // The same or the next buckets, late ones, jumps within the window, and jumps to just
      // before, at and past its edge (where a use leaves the window).
      move: fc.oneof(
        fc.constantFrom(0, 0, 1, 1, 2, -1, -2),
        fc.integer({ min: 3, max: 40 }),
        fc.constantFrom(57, 58, 59, 60, 61, 62, 63),
        fc.integer({ min: 64, max: 200 }),
      ),
      spent: fc.bigInt({ min: 1n, max: 10n ** 20n }),
      // A cap near the window's use, so both answers of `ok` come up.
      capShift: fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 90 }), async (steps) => {
        const id = await newPolicy();
        let model = new Model();
        let at = 1_000_000;
        for (const s of steps) {
          at = Math.max(0, at + s.move);
          const next = model.with(at, s.spent);
          const cap = next.window().spent + s.capShift;
          const holds = next.window().spent <= cap;
          expect(await write(id, at, s.spent, cap)).toBe(holds);
          if (holds) model = next;
          const want = model.window();
          const r = await row(id);
          expect(r).toEqual({ cur: model.current, total: want.spent, actions: want.actions });
          const ring = (await readUsage(svc.container.db, orgId)).usage.get(id)!;
          expect(windowUse(ring, model.current)).toEqual(want);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("takes its bucket from the database's clock once the organization's row is locked", async () => {
    const id = await newPolicy();
    const uses = [
      {
        org_id: orgId,
        policy_id: id,
        bucket_ms: bucketMs('minute'),
        spent: '1',
        actions: 1,
        cap_wei: null,
        cap_actions: null,
      },
    ];
    const dbSecond = async () =>
      Number(
        (
          await svc.container.db.execute<{ s: string }>(
            sql`SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS s`,
          )
        ).rows[0]!.s,
      );
    // Another transaction holds the organization's row for more than a bucket (a second),
    // while a group waits for it, as its debit does in the group statement.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const holder = svc.container.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT 1 FROM organizations WHERE id = ${orgId} FOR NO KEY UPDATE`);
      held();
      await released;
    });
    await holding;
    const statement = sql`
      WITH debit AS (
        UPDATE organizations SET balance_wei = balance_wei WHERE id = ${orgId} RETURNING id),
      policy_use AS (${policyUseCte(uses, sql`debit`)})
      SELECT ok FROM policy_use`;
    // Sent now, not when awaited below (drizzle sends a query once it is awaited).
    const group = svc.container.db.execute(statement).then((r) => r.rows);
    await new Promise((r) => setTimeout(r, 1_100));
    const freed = await dbSecond();
    release();
    await holder;
    await group;
    // Not the second the statement began in: the one it got the lock in, or later.
    expect((await row(id)).cur).toBeGreaterThanOrEqual(freed);
  });

  it('takes over a ring written before the current bucket had columns of its own', async () => {
    const id = await newPolicy();
    // As rows were before migration 0033: the current bucket (1000) in the ring itself.
    await svc.container.db.execute(sql`UPDATE policy_usage
      SET buckets[1000 % 61 + 1] = 1000, spent[1000 % 61 + 1] = 7, actions[1000 % 61 + 1] = 2,
        buckets[950 % 61 + 1] = 950, spent[950 % 61 + 1] = 5, actions[950 % 61 + 1] = 1,
        buckets[930 % 61 + 1] = 930, spent[930 % 61 + 1] = 100, actions[930 % 61 + 1] = 1
      WHERE policy_id = ${id}`);
    // Bucket 1000 again: 7 + 5 + 3 in the window (930 is out of it), not 3.
    expect(await write(id, 1000, 3n, 15n)).toBe(true);
    expect(await row(id)).toEqual({ cur: 1000, total: 15n, actions: 4 });
    expect(await write(id, 1000, 1n, 15n)).toBe(false);
    expect(await row(id)).toEqual({ cur: 1000, total: 15n, actions: 4 });
    // Rolling on: 1000's use (old and new) moves into the ring together; 950 leaves the window.
    expect(await write(id, 1011, 1n, 100n)).toBe(true);
    expect(await row(id)).toEqual({ cur: 1011, total: 11n, actions: 4 });
    const ring = (await readUsage(svc.container.db, orgId)).usage.get(id)!;
    expect(windowUse(ring, 1011)).toEqual({ spent: 11n, actions: 4 });
  });
});
