import type { LightMyRequestResponse } from 'fastify';
import { expect, it } from 'vitest';
import { permissionsOfRole } from '../../src/lib/permissions.js';
import { createApiKey } from './api-keys.js';
import { createMember, type TestMember } from './fixtures.js';
import type { Headers } from './harness.js';
import type { TestService } from './service.js';

/**
 * The rows × callers of the recent-sign-in rule for changes an API key may make
 * (`requireRecentSignInOrKey`, docs/auth.md, "Changing credentials"): each change runs for a
 * session signed in just now, one signed in 11 minutes ago, and an API key holding the admin
 * role's permissions (made while the sign-in was fresh, used 11 minutes later). A guarded
 * change refuses only the old session, with 403 code 7 and `details.reauthenticate`, and
 * writes nothing; every other row is applied.
 */
export type Caller = 'fresh session' | 'session signed in 11 minutes ago' | 'API key';
export const CALLERS: Caller[] = ['fresh session', 'session signed in 11 minutes ago', 'API key'];

const MIN = 60_000;

export interface Prepared {
  /** Makes the change as the caller whose headers are given. */
  send: (headers: Headers) => Promise<LightMyRequestResponse>;
  /** What the change would change, read from the database. */
  state: () => Promise<unknown>;
}

export interface Change {
  name: string;
  /** Needs a recent sign-in of a session (false: open to any live session). */
  guarded: boolean;
  /** Sets up what the change needs, as the owner signed in just now. */
  prepare: (owner: TestMember) => Promise<Prepared>;
}

/** One test per change and caller (call it inside a `describe`). */
export function recentSignInCases(svc: TestService, changes: readonly Change[]): void {
  for (const change of changes) {
    for (const caller of CALLERS) {
      const allowed = caller !== 'session signed in 11 minutes ago' || !change.guarded;
      it(`${change.name}, ${caller}: ${allowed ? 'allowed' : '403 code 7'}`, async () => {
        const owner = await createMember(svc, { role: 'owner' });
        const prepared = await change.prepare(owner);
        const key =
          caller === 'API key'
            ? await createApiKey(svc, owner, [...permissionsOfRole('admin')])
            : null;
        if (caller !== 'fresh session') svc.clock.advance(11 * MIN);
        const before = await prepared.state();
        const res = await prepared.send(key ? key.headers : owner.headers);
        if (allowed) {
          expect(res.statusCode, res.body).toBe(200);
          expect(await prepared.state()).not.toEqual(before);
          return;
        }
        expect([res.statusCode, res.json<{ code: number }>().code], res.body).toEqual([403, 7]);
        expect(res.json<{ message: string; details: unknown }>()).toMatchObject({
          message: expect.stringMatching(/^sign in again to /),
          details: { reauthenticate: true, max_age_seconds: 600 },
        });
        // Refused before anything was written.
        expect(await prepared.state()).toEqual(before);
      });
    }
  }
}
