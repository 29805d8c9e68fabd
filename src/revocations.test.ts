import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { applyNotice, createRevocationListener, type RevocableCaches } from './revocations.js';

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

describe('while the listener cannot listen', () => {
  it('forgets everything at each attempt, a bounded time apart, and stops when stopped', async () => {
    const { told, caches } = noting();
    // Nothing listens on port 1: every attempt fails at once.
    const listener = createRevocationListener(
      'postgres://nobody@127.0.0.1:1/none',
      caches,
      pino({ level: 'silent' }),
    );
    await listener.start();
    expect(listener.listening).toBe(false);
    await new Promise((r) => setTimeout(r, 1_500));
    // The loss, then each attempt (after ~0.1, 0.2, 0.4, 0.8 s with jitter) forgets again.
    expect(told.length).toBeGreaterThanOrEqual(4);
    expect(told.every((t) => t === 'all')).toBe(true);
    expect(listener.listens).toBe(0);
    await listener.stop();
    const after = told.length;
    await new Promise((r) => setTimeout(r, 600));
    expect(told.length).toBe(after);
  });
});
