import { afterEach, describe, expect, it, vi } from 'vitest';
import { SlotGate } from './slot-gate.js';

class Busy extends Error {}

/** Work that settles only when the test says. */
function held() {
  let settle!: (v: string) => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<string>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const work = vi.fn(() => promise);
  return { work, settle, fail };
}

const turn = () => new Promise((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('SlotGate', () => {
  it('runs at most `slots` at once; the others start in arrival order as slots free', async () => {
    const gate = new SlotGate(2, 60_000, 10, () => new Busy());
    const w = [held(), held(), held(), held()];
    const answers = Promise.allSettled(w.map((h) => gate.run(h.work)));
    await turn();
    expect(w.map((h) => h.work.mock.calls.length)).toEqual([1, 1, 0, 0]);
    expect(gate.load).toEqual({ running: 2, waiting: 2 });
    w[1]!.settle('b');
    await turn();
    expect(w.map((h) => h.work.mock.calls.length)).toEqual([1, 1, 1, 0]);
    // A failed work frees its slot too.
    w[0]!.fail(new Error('a failed'));
    await turn();
    expect(w.map((h) => h.work.mock.calls.length)).toEqual([1, 1, 1, 1]);
    w[2]!.settle('c');
    w[3]!.settle('d');
    const settled = await answers;
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : 'failed'))).toEqual([
      'failed',
      'b',
      'c',
      'd',
    ]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses at once beyond the queue, and after the wait when no slot frees; a refused work never starts', async () => {
    vi.useFakeTimers();
    const gate = new SlotGate(1, 2_000, 1, () => new Busy());
    const first = held();
    const running = gate.run(first.work);
    const queued = held();
    const waits = gate.run(queued.work);
    const beyond = held();
    await expect(gate.run(beyond.work)).rejects.toBeInstanceOf(Busy);
    expect(gate.load).toEqual({ running: 1, waiting: 1 });

    const refused = expect(waits).rejects.toBeInstanceOf(Busy);
    await vi.advanceTimersByTimeAsync(2_000);
    await refused;
    expect(gate.load).toEqual({ running: 1, waiting: 0 });
    first.settle('a');
    expect(await running).toBe('a');
    expect(queued.work).not.toHaveBeenCalled();
    expect(beyond.work).not.toHaveBeenCalled();
    // Free again: the next work runs at once.
    const next = held();
    const ran = gate.run(next.work);
    next.settle('n');
    expect(await ran).toBe('n');
  });
});
