import { describe, expect, it } from 'vitest';
import { AppError, Code } from '../lib/errors.js';
import type { Executor } from './pool.js';
import { OrganizationReports } from './reports.js';

const exec = {} as Executor;

/** A report that runs until `release()`. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { release, read: async () => done };
}

describe('OrganizationReports', () => {
  it('runs at most perOrganization of one organization at once; the next waits for its turn', async () => {
    const reports = new OrganizationReports(exec, 2, 1_000);
    const [r1, r2] = [held(), held()];
    let thirdRan = false;
    const p1 = reports.run('org_a', r1.read);
    const p2 = reports.run('org_a', r2.read);
    const p3 = reports.run('org_a', async () => {
      thirdRan = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(thirdRan).toBe(false);
    r1.release();
    await p1;
    await p3;
    expect(thirdRan).toBe(true);
    r2.release();
    await p2;
    // Nothing running or waiting: nothing remembered.
    expect(reports.organizations).toBe(0);
  });

  it("refuses one whose turn does not come within waitMs (503 code 14), never another organization's", async () => {
    const reports = new OrganizationReports(exec, 1, 50);
    const r = held();
    const first = reports.run('org_a', r.read);
    const refused = reports.run('org_a', () => Promise.resolve('never'));
    await expect(reports.run('org_b', () => Promise.resolve('b'))).resolves.toBe('b');
    const err = await refused.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: Code.UNAVAILABLE, details: { retry_after_seconds: 5 } });
    r.release();
    await first;
    expect(reports.organizations).toBe(0);
  });

  it('frees the turn of a report that fails', async () => {
    const reports = new OrganizationReports(exec, 1, 1_000);
    await expect(reports.run('org_a', () => Promise.reject(new Error('57014')))).rejects.toThrow();
    await expect(reports.run('org_a', () => Promise.resolve(1))).resolves.toBe(1);
    expect(reports.organizations).toBe(0);
  });
});
