import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { describeIf } from '../helpers/requires.js';
import type { ContentAction } from '../../src/modules/batches/content.js';
import { computeHeader, type HeaderInput } from '../../src/modules/batches/header.js';
import { HeaderPool } from '../../src/modules/batches/header-pool.js';
import { databaseUrl, freshDatabaseUrl } from '../helpers/db.js';

const hex = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const input = (n: number, version = 2): HeaderInput => ({
  batch: { id: 'bat_1', sequence: 2, version, when_created: '2026-11-25T09:00:00.000Z' },
  prev: { hash: hex(1), integrity_root: hex(2) },
  actions: Array.from({ length: n }, (_, i): ContentAction => ({
    record: {
      id: `act_${i}`,
      hash: hex(100 + i),
      name: 'mint',
      wallet: `0x${'ab'.repeat(20)}`,
      organization_id: 'org_1',
      signature_type: 'eoa',
      signature: `0x${'cd'.repeat(65)}`,
      nonce: i,
      params: { template_id: 'tpl_1', note: 'ünï 😀' },
      expires: '2026-11-25T10:00:00.000Z',
      object_id: `obj_${i % 5}`,
      template_id: 'tpl_1',
      template_version: 1,
      fee_wei: '1000',
      batch_id: 'bat_1',
      when_created: '2026-11-25T09:00:00.000Z',
    },
    integrityHash: hex(1000 + i),
  })),
});

const pools: HeaderPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** The pool's way to the header of `input`, reading its actions on this thread when asked. */
const computeOn = (pool: HeaderPool, { actions, ...request }: HeaderInput) =>
  pool.compute(request, () => Promise.resolve(actions));
const mustNotRead = () => Promise.reject(new Error('read on the event loop'));

describe('the batch header thread', () => {
  it('computes on its thread exactly what computeHeader computes inline', async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }));
    pools.push(pool);
    const [a, b] = await Promise.all([computeOn(pool, input(300)), computeOn(pool, input(7, 1))]);
    expect(pool.threaded).toBe(true);
    expect(a).toEqual(await computeHeader(input(300)));
    expect(b).toEqual(await computeHeader(input(7, 1)));
  });

  it('answers an error of the header itself as an error', async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }));
    pools.push(pool);
    await expect(computeOn(pool, input(3, 9))).rejects.toThrow(/unknown batch content version 9/);
    expect(pool.threaded).toBe(true);
  });

  it('computes inline once closed', async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }));
    await pool.close();
    expect(pool.threaded).toBe(false);
    expect(await computeOn(pool, input(4))).toEqual(await computeHeader(input(4)));
  });

  it('with the database, reads the actions on its own connection, never on the event loop', async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }), {
      databaseUrl: await freshDatabaseUrl(),
    });
    pools.push(pool);
    const { actions: _, ...request } = input(0);
    // No batch `bat_1` in a new database: the thread reads no actions, and says so by the
    // header of an empty batch.
    expect(await pool.compute(request, mustNotRead)).toEqual(await computeHeader(input(0)));
  });

  it("answers a failed read of its own as the caller's error, and stays threaded", async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }), {
      databaseUrl: databaseUrl('ons_no_such_database'),
    });
    pools.push(pool);
    const { actions: _, ...request } = input(0);
    await expect(pool.compute(request, mustNotRead)).rejects.toThrow(/ons_no_such_database/);
    expect(pool.threaded).toBe(true);
  });
});

/** A thread's scheduling policy (0 normal, 5 SCHED_IDLE) and nice value, from Linux's /proc. */
function scheduling(tid: number): { policy: number; nice: number } {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 19 (nice) and 41 (policy) of proc(5), counted from field 3 (state) here.
  return { nice: Number(fields[16]), policy: Number(fields[38]) };
}

const hasChrt = (() => {
  try {
    execFileSync('chrt', ['--version'], { stdio: 'ignore' });
    return process.platform === 'linux';
  } catch {
    return false;
  }
})();

describeIf(hasChrt, "Linux and util-linux's chrt")("the header thread's priority", () => {
  const started = async (priority?: 'idle' | 'low' | 'normal') => {
    const pool = new HeaderPool(pino({ level: 'silent' }), priority ? { priority } : {});
    pools.push(pool);
    const info = await pool.threadInfo();
    expect(info?.tid).toEqual(expect.any(Number));
    return { info: info!, sched: scheduling(info!.tid!), pool };
  };

  it('is SCHED_IDLE by default, and headers still come', async () => {
    const { info, sched, pool } = await started();
    expect(info.priority).toBe('idle');
    expect(sched.policy).toBe(5);
    expect(await computeOn(pool, input(20))).toEqual(await computeHeader(input(20)));
  });

  it('is nice 10 when low', async () => {
    const { info, sched } = await started('low');
    expect(info.priority).toBe('low');
    expect(sched).toEqual({ policy: 0, nice: 10 });
  });

  it("is the process's when normal", async () => {
    const { info, sched } = await started('normal');
    expect(info.priority).toBe('normal');
    expect(sched).toEqual({ policy: 0, nice: scheduling(process.pid).nice });
  });

  it('reports no thread once closed', async () => {
    const pool = new HeaderPool(pino({ level: 'silent' }));
    await pool.close();
    expect(await pool.threadInfo()).toBeNull();
  });
});
