import { describe, expect, it } from 'vitest';
import { AppError, Code } from '../../../lib/errors.js';
import { refusedHost, type HostResolver } from './address-policy.js';
import { gatedResolver, LookupAbandoned, LookupsBusy } from './lookup-gate.js';

/** A resolver whose lookups settle only when the test says: like a name server that is slow. */
function heldResolver() {
  const started: string[] = [];
  const pending = new Map<string, (addresses: string[]) => void>();
  const resolve: HostResolver = (hostname) =>
    new Promise((answer) => {
      started.push(hostname);
      pending.set(hostname, answer);
    });
  const settle = (hostname: string) => {
    pending.get(hostname)!(['93.184.215.14']);
    pending.delete(hostname);
  };
  return { resolve, started, settle };
}

const turn = () => new Promise((r) => setImmediate(r));
const closed = { allowLoopback: false };

describe('gatedResolver', () => {
  it('runs at most `slots` lookups; the others start in arrival order as lookups settle', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 2, 10);
    const answers = ['a', 'b', 'c', 'd', 'e'].map((h) => gated(`${h}.example`));
    await turn();
    expect(held.started).toEqual(['a.example', 'b.example']);
    held.settle('b.example');
    await turn();
    expect(held.started).toEqual(['a.example', 'b.example', 'c.example']);
    held.settle('a.example');
    held.settle('c.example');
    await turn();
    expect(held.started).toEqual(['a.example', 'b.example', 'c.example', 'd.example', 'e.example']);
    held.settle('d.example');
    held.settle('e.example');
    expect(await Promise.all(answers)).toEqual(Array(5).fill(['93.184.215.14']));
  });

  it('a caller that stops waiting in the queue leaves it: its lookup never starts', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const first = gated('a.example');
    const stop = new AbortController();
    const left = gated('b.example', stop.signal);
    const third = gated('c.example');
    stop.abort();
    await expect(left).rejects.toThrow('no longer waited for');
    held.settle('a.example');
    await first;
    await turn();
    expect(held.started).toEqual(['a.example', 'c.example']);
    held.settle('c.example');
    await third;
  });

  it('a caller that stops waiting for a running lookup is answered at once; the slot stays held until the lookup settles', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const stop = new AbortController();
    const running = gated('a.example', stop.signal);
    await turn();
    stop.abort();
    await expect(running).rejects.toThrow('no longer waited for');
    const next = gated('b.example');
    await turn();
    expect(held.started).toEqual(['a.example']);
    held.settle('a.example');
    await turn();
    expect(held.started).toEqual(['a.example', 'b.example']);
    held.settle('b.example');
    await next;
  });

  it('refuses at once beyond the queue', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 2);
    const waiting = ['a', 'b', 'c'].map((h) => gated(`${h}.example`));
    await expect(gated('d.example')).rejects.toBeInstanceOf(LookupsBusy);
    for (const h of ['a', 'b', 'c']) {
      held.settle(`${h}.example`);
      await turn();
    }
    await Promise.all(waiting);
    expect(held.started).toEqual(['a.example', 'b.example', 'c.example']);
  });

  it('coalesces requests for one name: 64 of a hanging name take one slot, another name runs at once', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 2, 10);
    const same = Array.from({ length: 64 }, () => gated('hang.example'));
    await turn();
    expect(held.started).toEqual(['hang.example']);
    expect(gated.waitsForSlot('hang.example')).toBe(false);
    const other = gated('other.example');
    await turn();
    expect(held.started).toEqual(['hang.example', 'other.example']);
    held.settle('other.example');
    expect(await other).toEqual(['93.184.215.14']);
    held.settle('hang.example');
    expect(await Promise.all(same)).toEqual(Array(64).fill(['93.184.215.14']));
    // Settled: the next request for the name looks it up again.
    const again = gated('hang.example');
    await turn();
    expect(held.started).toEqual(['hang.example', 'other.example', 'hang.example']);
    held.settle('hang.example');
    await again;
  });

  it('a name waiting for a slot holds one place in the queue, however many wait for it', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 1);
    const first = gated('a.example');
    const same = Array.from({ length: 10 }, () => gated('b.example'));
    expect(gated.waitsForSlot('b.example')).toBe(true);
    expect(gated.waitsForSlot('a.example')).toBe(false);
    await expect(gated('c.example')).rejects.toBeInstanceOf(LookupsBusy);
    held.settle('a.example');
    await first;
    await turn();
    expect(held.started).toEqual(['a.example', 'b.example']);
    held.settle('b.example');
    expect(await Promise.all(same)).toEqual(Array(10).fill(['93.184.215.14']));
  });

  it('a caller that stops waiting for a shared lookup stops only itself', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const stop = new AbortController();
    const leaving = gated('a.example', stop.signal);
    const staying = gated('a.example');
    const queuedStop = new AbortController();
    const queuedLeaving = gated('b.example', queuedStop.signal);
    const queuedStaying = gated('b.example');
    stop.abort();
    queuedStop.abort();
    // Each says whether its lookup had started: one only queued knows nothing of the name.
    await expect(leaving).rejects.toBeInstanceOf(LookupAbandoned);
    await expect(leaving).rejects.toMatchObject({ started: true });
    await expect(queuedLeaving).rejects.toMatchObject({ started: false });
    held.settle('a.example');
    expect(await staying).toEqual(['93.184.215.14']);
    await turn();
    // b.example still had a caller: it ran.
    expect(held.started).toEqual(['a.example', 'b.example']);
    held.settle('b.example');
    expect(await queuedStaying).toEqual(['93.184.215.14']);
  });

  it('a waiting name whose callers have all gone never starts', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const first = gated('a.example');
    const stops = [new AbortController(), new AbortController()];
    const left = stops.map((s) => gated('b.example', s.signal));
    for (const s of stops) s.abort();
    for (const l of left) await expect(l).rejects.toThrow('no longer waited for');
    expect(gated.waitsForSlot('b.example')).toBe(false);
    held.settle('a.example');
    await first;
    await turn();
    expect(held.started).toEqual(['a.example']);
  });

  it('shares a failure with every caller of the name', async () => {
    let calls = 0;
    const gated = gatedResolver(() => {
      calls++;
      return Promise.reject(new Error('ENOTFOUND'));
    });
    const all = Array.from({ length: 5 }, () => gated('gone.example'));
    for (const p of all) await expect(p).rejects.toThrow('ENOTFOUND');
    expect(calls).toBe(1);
  });

  it('tells each caller when its lookup starts: a waiting one as it leaves the queue, one joining a running lookup at once', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const told: string[] = [];
    const first = gated('a.example', undefined, () => told.push('a'));
    const queued = gated('b.example', undefined, () => told.push('b'));
    const joined = gated('b.example', undefined, () => told.push('b again'));
    expect(told).toEqual(['a']);
    held.settle('a.example');
    await first;
    await turn();
    expect(told).toEqual(['a', 'b', 'b again']);
    const late = gated('b.example', undefined, () => told.push('b late'));
    expect(told).toEqual(['a', 'b', 'b again', 'b late']);
    held.settle('b.example');
    await Promise.all([queued, joined, late]);
  });

  it('an already aborted signal never starts a lookup', async () => {
    const held = heldResolver();
    await expect(gatedResolver(held.resolve)('a.example', AbortSignal.abort())).rejects.toThrow(
      'no longer waited for',
    );
    expect(held.started).toEqual([]);
  });
});

describe('saving an address through the gate (refusedHost)', () => {
  it('names that never resolve hold at most the slots: a check waiting for one times out without starting a lookup', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 10);
    const checks = ['a', 'b', 'c'].map((h) => refusedHost(`${h}.example`, closed, gated, 50));
    expect(await Promise.all(checks)).toEqual([
      'a.example does not resolve within 0.05 s',
      'b.example does not resolve within 0.05 s',
      'c.example does not resolve within 0.05 s',
    ]);
    expect(held.started).toEqual(['a.example']);
  });

  it('answers unavailable (503) when too many lookups wait, not a refusal of the address', async () => {
    const held = heldResolver();
    const gated = gatedResolver(held.resolve, 1, 0);
    const first = refusedHost('a.example', closed, gated, 1_000);
    const busy = await refusedHost('b.example', closed, gated, 1_000).catch((err: unknown) => err);
    expect(busy).toBeInstanceOf(AppError);
    expect((busy as AppError).code).toBe(Code.UNAVAILABLE);
    held.settle('a.example');
    expect(await first).toBeNull();
  });
});
