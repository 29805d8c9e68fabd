import { describe, expect, it } from 'vitest';
import { GroupCommitter } from './group-commit.js';
import type { ApplyOutcome, VerifiedAction } from './types.js';

function action(
  walletId: string,
  nonce: number,
  objectId?: string,
  orgId = `org_${walletId}`,
): VerifiedAction {
  return {
    payerOrgId: orgId,
    walletId,
    apiKeyId: null,
    walletAddress: walletId,
    signerRole: 'member',
    action: {
      wallet: walletId,
      name: objectId ? 'transfer' : 'mint',
      params: objectId ? { object_id: objectId, to: '0x' } : { template_id: 't' },
      nonce,
      expires: '',
    },
    text: '',
    hash: `${walletId}:${nonce}`,
    signature: { type: 'eoa', signature: '0x' },
    passkey: null,
    credential: null,
    maxFeeWei: null,
  };
}

/** An apply function that records what ran at once and in which order. */
function recorder(delayMs: number) {
  const running = new Set<string>();
  const log: string[] = [];
  let maxConcurrent = 0;
  const violations: string[] = [];
  const apply = async (items: readonly VerifiedAction[]): Promise<ApplyOutcome[]> => {
    const keys = items.flatMap((i) => [
      `org:${i.payerOrgId}`,
      `w:${i.walletId}`,
      ...(typeof i.action.params.object_id === 'string' ? [`o:${i.action.params.object_id}`] : []),
    ]);
    for (const k of new Set(keys)) {
      if (running.has(k)) violations.push(k);
      running.add(k);
    }
    inFlight.n++;
    maxConcurrent = Math.max(maxConcurrent, inFlight.n);
    await new Promise((r) => setTimeout(r, delayMs));
    for (const i of items) log.push(i.hash);
    for (const k of new Set(keys)) running.delete(k);
    inFlight.n--;
    return items.map(() => ({ ok: false, error: new Error('x') }) as unknown as ApplyOutcome);
  };
  const inFlight = { n: 0 };
  return { apply, log, violations, max: () => maxConcurrent };
}

describe('GroupCommitter', () => {
  it('runs groups concurrently but never two that share a wallet, an object or an organization', async () => {
    const r = recorder(5);
    const c = new GroupCommitter(
      { apply: r.apply },
      { maxWaitMs: 1, maxGroup: 4, maxConcurrent: 3, stallMs: 0, maxStalled: 0 },
    );
    const all: Promise<ApplyOutcome>[] = [];
    for (let n = 0; n < 6; n++) {
      for (const w of ['a', 'b', 'c', 'd', 'e']) all.push(c.submit(action(w, n)));
      all.push(c.submit(action('f', n, 'obj1')));
      all.push(c.submit(action('g', n, 'obj1')));
      // Two wallets of one organization.
      all.push(c.submit(action('h', n, undefined, 'org_shared')));
      all.push(c.submit(action('i', n, undefined, 'org_shared')));
    }
    await Promise.all(all);
    expect(r.violations).toEqual([]);
    expect(r.max()).toBeGreaterThan(1);
    expect(r.max()).toBeLessThanOrEqual(3);
    // Each wallet's actions applied in the order they arrived.
    for (const w of ['a', 'b', 'f', 'g']) {
      const mine = r.log.filter((h) => h.startsWith(`${w}:`));
      expect(mine).toEqual([0, 1, 2, 3, 4, 5].map((n) => `${w}:${n}`));
    }
    // The two wallets sharing obj1 kept their arrival order on it, too.
    const onObject = r.log.filter((h) => h.startsWith('f:') || h.startsWith('g:'));
    expect(onObject).toEqual([0, 1, 2, 3, 4, 5].flatMap((n) => [`f:${n}`, `g:${n}`]));
    await c.drain();
  });

  it('keeps a group within maxGroup and drains on shutdown', async () => {
    const sizes: number[] = [];
    const c = new GroupCommitter(
      {
        apply: async (items) => {
          sizes.push(items.length);
          await new Promise((r) => setTimeout(r, 2));
          return items.map(() => ({ ok: false, error: new Error('x') }) as unknown as ApplyOutcome);
        },
      },
      { maxWaitMs: 5, maxGroup: 10, maxConcurrent: 1, stallMs: 0, maxStalled: 0 },
    );
    const all = Array.from({ length: 35 }, (_, i) => c.submit(action(`w${i}`, 0)));
    await c.drain();
    await Promise.all(all);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(35);
  });

  it("holds an organization's actions that come while its group runs for the next group, one group at a time", async () => {
    const groups: string[][] = [];
    let release: () => void = () => {};
    const c = new GroupCommitter(
      {
        apply: async (items) => {
          groups.push(items.map((i) => i.hash));
          if (groups.length === 1) await new Promise<void>((r) => (release = r));
          return items.map(() => ({ ok: false, error: new Error('x') }) as unknown as ApplyOutcome);
        },
      },
      { maxWaitMs: 1, maxGroup: 100, maxConcurrent: 4, stallMs: 0, maxStalled: 0 },
    );
    const all = [c.submit(action('a', 0, undefined, 'org_1'))];
    await new Promise((r) => setTimeout(r, 20));
    expect(groups).toEqual([['a:0']]);
    // While org_1's group runs: four more of its wallets, and one of another organization.
    for (const w of ['b', 'c', 'd', 'e']) all.push(c.submit(action(w, 0, undefined, 'org_1')));
    all.push(c.submit(action('x', 0, undefined, 'org_2')));
    await new Promise((r) => setTimeout(r, 20));
    // The other organization's action did not wait; org_1's did, though there was room.
    expect(groups).toEqual([['a:0'], ['x:0']]);
    release();
    await Promise.all(all);
    expect(groups).toEqual([['a:0'], ['x:0'], ['b:0', 'c:0', 'd:0', 'e:0']]);
  });

  /** An applier whose groups each wait until released; `groups` lists what started. */
  function held() {
    const groups: string[][] = [];
    const release = new Map<string, () => void>();
    const apply = async (items: readonly VerifiedAction[]) => {
      groups.push(items.map((i) => i.hash));
      await new Promise<void>((r) => release.set(items[0]!.hash, r));
      return items.map(() => ({ ok: false, error: new Error('x') }) as unknown as ApplyOutcome);
    };
    return { apply, groups, release: (hash: string) => release.get(hash)!() };
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("lets other organizations' actions start beside a stalled group, never its own", async () => {
    const h = held();
    const c = new GroupCommitter(
      { apply: h.apply },
      { maxWaitMs: 0, maxGroup: 100, maxConcurrent: 1, stallMs: 100, maxStalled: 1 },
    );
    const all = [c.submit(action('a', 0, 'obj1', 'org_1'))];
    await sleep(5);
    all.push(c.submit(action('b', 0, undefined, 'org_1'))); // its organization is busy
    all.push(c.submit(action('c', 0, 'obj1', 'org_3'))); // its object is busy
    all.push(c.submit(action('x', 0, undefined, 'org_2')));
    await sleep(15);
    // Before the stall time, one group at a time, as maxConcurrent says.
    expect(h.groups).toEqual([['a:0']]);
    expect(c.stats.stalled).toBe(0);
    await sleep(150);
    // The first group stalled: the other organization's action went ahead, alone.
    expect(h.groups).toEqual([['a:0'], ['x:0']]);
    expect(c.stats.stalled).toBe(1);
    expect(c.depth).toEqual({ queued: 2, running: 2 });
    h.release('x:0');
    h.release('a:0');
    await sleep(5);
    expect(h.groups).toEqual([['a:0'], ['x:0'], ['b:0', 'c:0']]);
    h.release('b:0');
    await Promise.all(all);
    await c.drain();
  });

  it('lets at most maxStalled groups stall at once, and counts one again when a slot frees', async () => {
    const h = held();
    const c = new GroupCommitter(
      { apply: h.apply },
      { maxWaitMs: 0, maxGroup: 1, maxConcurrent: 1, stallMs: 20, maxStalled: 1 },
    );
    const all = ['p', 'q', 'r'].map((w) => c.submit(action(w, 0)));
    await sleep(150);
    // p stalled and q started; q stalled too, but the one stalled slot is p's: r waits.
    expect(h.groups.map((g) => g.join())).toEqual(['p:0', 'q:0']);
    expect(c.stats.stalled).toBe(1);
    h.release('p:0');
    await sleep(60);
    // p's slot is free: q takes it when it looks again, and r starts.
    expect(h.groups.map((g) => g.join())).toEqual(['p:0', 'q:0', 'r:0']);
    expect(c.stats.stalled).toBe(2);
    h.release('q:0');
    h.release('r:0');
    await Promise.all(all);
    await c.drain();
    expect(c.depth).toEqual({ queued: 0, running: 0 });
  });

  it('never stalls a group with stallMs 0', async () => {
    const h = held();
    const c = new GroupCommitter(
      { apply: h.apply },
      { maxWaitMs: 0, maxGroup: 1, maxConcurrent: 1, stallMs: 0, maxStalled: 4 },
    );
    const all = ['p', 'q'].map((w) => c.submit(action(w, 0)));
    await sleep(60);
    expect(h.groups.map((g) => g.join())).toEqual(['p:0']);
    h.release('p:0');
    await sleep(5);
    h.release('q:0');
    await Promise.all(all);
    expect(c.stats.stalled).toBe(0);
  });
});
