import { describe, expect, it } from 'vitest';
import { checkProbes } from './check.js';
import { SURFACES } from './surfaces.js';
import { usePrivacyWorld } from './world.js';

/**
 * Nothing private in any answer a caller without a credential, or with another
 * organization's, can get (docs/batches.md, "What is public"; docs/objects.md; docs/log.md).
 * One organization keeps private objects, actions, members, an invitation, an API key, a
 * webhook, a spend policy, a support message, its balance and a private file, each private
 * field holding a marker (test/privacy/world.ts). Every GET route answered without a
 * credential has a row in SURFACES (test/privacy/surfaces.ts) that calls it with the real
 * ids, the private ones included, and reads the links of each answer one level further;
 * no answer's body (as text and, for binary tiles, as hex) or headers may hold a marker or a
 * private id, hash or signature. A value the URL itself carries may come back (an echo is no
 * leak), and the batch explorer shows a private object's id and its actions' ids, as the
 * docs say it does.
 */
const { svc, world } = usePrivacyWorld();

const CALLERS: { name: string; headers: () => Record<string, string> }[] = [
  { name: 'no credential', headers: () => ({}) },
  { name: "another organization's person", headers: () => world().outsider.headers },
  { name: "another organization's API key", headers: () => world().outsiderKey.headers },
];

describe('the table', () => {
  it('has a row for every GET route answered without a credential', () => {
    const anonymous = svc
      .routeTable()
      .filter((r) => r.method === 'GET' && (r.auth === 'none' || r.auth === 'optional'))
      .map((r) => r.url);
    expect(anonymous.length).toBeGreaterThan(30);
    expect(new Set(SURFACES.map((s) => s.route))).toEqual(new Set([...anonymous, 'v2']));
  });
});

describe.each(CALLERS)('called with $name', (caller) => {
  it.each(SURFACES.map((s) => [s.route, s] as const))(
    'GET %s shows nothing private',
    async (_, surface) => {
      const { leaks, wrong } = await checkProbes(
        svc,
        world(),
        caller.headers(),
        surface.probes(world()),
      );
      expect(leaks).toEqual([]);
      expect(wrong).toEqual([]);
    },
  );
});
