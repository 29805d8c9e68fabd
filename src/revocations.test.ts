import { describe, expect, it } from 'vitest';
import { applyNotice, type RevocableCaches } from './revocations.js';

/** Caches that note what they were told to forget. */
function noting() {
  const told: string[] = [];
  const caches: RevocableCaches = {
    forgetKey: (id) => told.push(`key ${id}`),
    forgetSession: (id) => told.push(`session ${id}`),
    forgetAll: () => told.push('all'),
  };
  return { told, caches };
}

describe('a revocation notice (migration 0041)', () => {
  it.each([
    ['key key_01J0ABC', 'key key_01J0ABC'],
    ['session ses_01J0ABC', 'session ses_01J0ABC'],
    ['all', 'all'],
    // Anything not understood (a later release's notice) forgets everything: never wrong.
    ['key', 'all'],
    ['session ', 'all'],
    ['', 'all'],
    ['wallet w_1', 'all'],
    ['KEY key_1', 'all'],
  ])('%j forgets %j', (payload, expected) => {
    const { told, caches } = noting();
    applyNotice(caches, payload);
    expect(told).toEqual([expected]);
  });
});
