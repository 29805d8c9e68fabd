import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TtlCache } from './ttl-cache.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** How many of `keys` the cache still answers. */
const alive = (c: TtlCache<number, number>, keys: number[]) =>
  keys.filter((k) => c.get(k) !== undefined).length;

const keys = Array.from({ length: 200 }, (_, i) => i);

describe('TtlCache', () => {
  it('answers an entry until its TTL, and not at it', () => {
    const c = new TtlCache<number, number>(4_000);
    c.set(1, 10);
    vi.advanceTimersByTime(3_999);
    expect(c.get(1)).toBe(10);
    vi.advanceTimersByTime(1);
    expect(c.get(1)).toBeUndefined();
  });

  it('drops the oldest entry when full', () => {
    const c = new TtlCache<number, number>(4_000, 2);
    c.set(1, 10);
    c.set(2, 20);
    c.set(3, 30);
    expect([c.get(1), c.get(2), c.get(3)]).toEqual([undefined, 20, 30]);
  });

  it('with a spread, expires entries filled together apart, never after the TTL', () => {
    const c = new TtlCache<number, number>(4_000, 50_000, 0.25);
    for (const k of keys) c.set(k, k);
    // Each lives between 3/4 of the TTL and the TTL.
    vi.advanceTimersByTime(2_999);
    expect(alive(c, keys)).toBe(keys.length);
    vi.advanceTimersByTime(500); // 3,499 ms: about half gone
    const half = alive(c, keys);
    expect(half).toBeGreaterThan(0);
    expect(half).toBeLessThan(keys.length);
    vi.advanceTimersByTime(501); // 4,000 ms
    expect(alive(c, keys)).toBe(0);
  });

  it('without a spread, expires entries filled together at once', () => {
    const c = new TtlCache<number, number>(4_000);
    for (const k of keys) c.set(k, k);
    vi.advanceTimersByTime(3_999);
    expect(alive(c, keys)).toBe(keys.length);
    vi.advanceTimersByTime(1);
    expect(alive(c, keys)).toBe(0);
  });
});
