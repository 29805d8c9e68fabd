import { describe, expect, it } from 'vitest';
import { isId, newId, ulid } from './ids.js';

describe('ids', () => {
  it('makes prefixed ids that sort in creation order, even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('object', 1_767_225_600_000));
    expect(ids.every((id) => /^obj_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
  });

  it('orders ids of later times after earlier ones', () => {
    const a = ulid(1_000_000);
    const b = ulid(2_000_000);
    expect(a < b).toBe(true);
  });

  it('recognises ids of the right kind only', () => {
    const id = newId('wallet');
    expect(isId('wallet', id)).toBe(true);
    expect(isId('object', id)).toBe(false);
    expect(isId('wallet', 'wal_short')).toBe(false);
  });
});
