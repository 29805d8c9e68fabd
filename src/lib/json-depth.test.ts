import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

describe('nestsDeeperThan', () => {
  it('counts objects and arrays as levels and scalars as none', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: null }] }, 2)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [[[]]] }, 3)).toBe(true);
  });

  // Recursion overflows the stack near 10,000 levels; 100,000 shows the walk needs none. (A
  // million-level value once left a vitest worker hung in its teardown: kept well below.)
  it('reads a 100,000-level value without exhausting the stack', () => {
    const text = '['.repeat(100_000) + ']'.repeat(100_000);
    const deep: unknown = JSON.parse(text);
    expect(nestsDeeperThan(deep, 32)).toBe(true);
  });
});
