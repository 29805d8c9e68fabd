import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../db/pool.js';
import { FakeClock } from '../../lib/clock.js';
import { LastUsedRecorder } from './last-used.js';
import { newSecret } from './secret.js';
import { ApiKeyVerifier } from './verifier.js';

/** Fails the test if anything reaches the database. */
function untouchable(): Executor & { calls: number } {
  const exec = {
    calls: 0,
    execute: () => {
      exec.calls++;
      throw new Error('no lookup expected');
    },
  };
  return exec;
}

describe('ApiKeyVerifier', () => {
  it('refuses a malformed or mistyped key before any lookup', async () => {
    const db = untouchable();
    const verifier = new ApiKeyVerifier(
      db,
      new FakeClock(),
      new LastUsedRecorder(db, pino({ enabled: false })),
    );
    const good = newSecret();
    const mistyped = good.slice(0, 10) + (good[10] === 'x' ? 'y' : 'x') + good.slice(11);
    for (const key of ['nope', 'onsk_abc', mistyped]) {
      expect(await verifier.verify(key)).toEqual({ ok: false, reason: 'malformed API key' });
    }
    expect(db.calls).toBe(0);
  });
});
