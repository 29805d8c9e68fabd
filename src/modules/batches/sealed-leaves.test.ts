import { describe, expect, it } from 'vitest';
import type { HeaderLeaves } from './header.js';
import { SealedLeaves } from './sealed-leaves.js';

/** `n` leaves whose bytes say which they are, for the `actions_hash` `hash`. */
function leaves(n: number, hash = '0xaa'): HeaderLeaves {
  const data = new Uint8Array(32 * n);
  for (let i = 0; i < n; i++) data.fill(i + 1, i * 32, i * 32 + 32);
  return { actionsHash: hash, ids: Array.from({ length: n }, (_, i) => `act_${i}`), data };
}

describe('the leaves a header computation hands to the log', () => {
  it('are taken once, in order, each 32 bytes of its own', () => {
    const kept = new SealedLeaves();
    kept.keep('bat_1', leaves(3));
    const taken = kept.take('bat_1', '0xaa');
    expect(taken?.map((l) => l.id)).toEqual(['act_0', 'act_1', 'act_2']);
    expect(taken?.map((l) => [...l.leaf])).toEqual([1, 2, 3].map((b) => Array(32).fill(b)));
    expect(kept.take('bat_1', '0xaa')).toBeNull();
    expect(kept.size).toBe(0);
  });

  it('are not handed over for another actions_hash, and are dropped then', () => {
    const kept = new SealedLeaves();
    kept.keep('bat_1', leaves(2, '0xaa'));
    expect(kept.take('bat_1', '0xbb')).toBeNull();
    expect(kept.take('bat_1', '0xaa')).toBeNull();
  });

  it('are not handed over when their bytes are not 32 per id', () => {
    const kept = new SealedLeaves();
    kept.keep('bat_1', { ...leaves(2), data: new Uint8Array(63) });
    expect(kept.take('bat_1', '0xaa')).toBeNull();
  });

  it('are kept for the last eight batches only', () => {
    const kept = new SealedLeaves();
    for (let i = 1; i <= 10; i++) kept.keep(`bat_${i}`, leaves(1));
    expect(kept.size).toBe(8);
    expect(kept.take('bat_1', '0xaa')).toBeNull();
    expect(kept.take('bat_2', '0xaa')).toBeNull();
    expect(kept.take('bat_3', '0xaa')).not.toBeNull();
    expect(kept.take('bat_10', '0xaa')).not.toBeNull();
  });

  it('a batch kept again replaces what was kept for it, as the newest', () => {
    const kept = new SealedLeaves();
    kept.keep('bat_1', leaves(1, '0xaa'));
    for (let i = 2; i <= 8; i++) kept.keep(`bat_${i}`, leaves(1));
    kept.keep('bat_1', leaves(2, '0xcc'));
    kept.keep('bat_9', leaves(1));
    expect(kept.take('bat_2', '0xaa')).toBeNull();
    expect(kept.take('bat_1', '0xcc')).toHaveLength(2);
  });
});
