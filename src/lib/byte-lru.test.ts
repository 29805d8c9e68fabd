import { describe, expect, it } from 'vitest';
import { ByteLru } from './byte-lru.js';

const lru = (maxBytes: number, maxEntryBytes?: number) =>
  new ByteLru<string, Buffer>(maxBytes, (b) => b.length, maxEntryBytes);
const bytes = (n: number) => Buffer.alloc(n);
const keys = (c: ByteLru<string, Buffer>, all: string[]) =>
  all.filter((k) => c.get(k) !== undefined);

describe('ByteLru', () => {
  it('holds at most its budget in bytes, dropping the least recently used first', () => {
    const c = lru(100, 100);
    c.set('a', bytes(40));
    c.set('b', bytes(40));
    expect(c.get('a')).toBeDefined(); // a is now more recent than b
    c.set('c', bytes(40));
    expect(c.bytes).toBe(80);
    expect(c.get('b')).toBeUndefined();
    expect(keys(c, ['a', 'c'])).toEqual(['a', 'c']);
    // One large value drops as many as it needs.
    c.set('d', bytes(90));
    expect(keys(c, ['a', 'c', 'd'])).toEqual(['d']);
    expect([c.size, c.bytes]).toEqual([1, 90]);
  });

  it('does not keep a value larger than a quarter of its budget, by default', () => {
    const c = lru(100);
    c.set('a', bytes(10));
    expect(c.set('big', bytes(26))).toBe(false);
    expect(c.set('quarter', bytes(25))).toBe(true);
    expect(keys(c, ['a', 'big', 'quarter'])).toEqual(['a', 'quarter']);
    expect(c.bytes).toBe(35);
  });

  it('counts a replaced value once', () => {
    const c = lru(100);
    c.set('a', bytes(20));
    c.set('a', bytes(5));
    expect([c.size, c.bytes]).toEqual([1, 5]);
    c.delete('a');
    expect([c.size, c.bytes]).toEqual([0, 0]);
  });

  it('builds a missing value once for callers at the same time, then answers it kept', async () => {
    const c = lru(100);
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const build = async () => {
      builds++;
      await gate;
      return bytes(10);
    };
    const waiting = [c.load('a', build), c.load('a', build), c.load('a', build)];
    release();
    const values = await Promise.all(waiting);
    expect(builds).toBe(1);
    expect(values[1]).toBe(values[0]);
    expect(await c.load('a', build)).toBe(values[0]);
    expect(builds).toBe(1);
  });

  it('shares the build of a value too large to keep, but builds it again later', async () => {
    const c = lru(100);
    let builds = 0;
    const build = async () => {
      builds++;
      await Promise.resolve();
      return bytes(50);
    };
    await Promise.all([c.load('big', build), c.load('big', build)]);
    expect(builds).toBe(1);
    await c.load('big', build);
    expect([builds, c.size]).toEqual([2, 0]);
  });

  it('keeps no failed build: every caller gets its error, the next one builds again', async () => {
    const c = lru(100);
    let builds = 0;
    const failing = async () => {
      builds++;
      await Promise.resolve();
      throw new Error('no');
    };
    const both = [c.load('a', failing), c.load('a', failing)];
    for (const p of both) await expect(p).rejects.toThrow('no');
    expect(builds).toBe(1);
    expect(await c.load('a', async () => bytes(3))).toHaveLength(3);
  });
});
