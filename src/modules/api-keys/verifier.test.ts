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

  it('does not remember a key read before a forget that came while it was read', async () => {
    for (const forget of ['forget', 'forgetAll'] as const) {
      const secret = newSecret();
      let release: () => void = () => undefined;
      const db = {
        calls: 0,
        // The lookup answers a live key, but only once the test lets it.
        execute: async () => {
          db.calls++;
          if (db.calls === 1) await new Promise<void>((r) => (release = r));
          return {
            rows: [
              {
                id: 'key_1',
                organization_id: 'org_1',
                created_by: 'wal_1',
                permissions: ['objects.read'],
                expires_at: new Date(Date.now() + 3_600_000),
                deleted_at: null,
                creator_role: 'owner',
              },
            ],
          };
        },
      } as unknown as Executor & { calls: number };
      const verifier = new ApiKeyVerifier(
        db,
        new FakeClock(),
        new LastUsedRecorder(db, pino({ enabled: false })),
      );
      const first = verifier.verify(secret);
      await new Promise((r) => setImmediate(r));
      // The key is deleted and forgotten while the first lookup is on its way.
      if (forget === 'forget') verifier.forget('key_1');
      else verifier.forgetAll();
      release();
      expect((await first).ok, forget).toBe(true);
      // Not remembered: the next use looks again (and would see the delete).
      await verifier.verify(secret);
      expect(db.calls, forget).toBe(2);
      // With no forget in between, the next use is answered from memory.
      await verifier.verify(secret);
      expect(db.calls, forget).toBe(2);
    }
  });
});
