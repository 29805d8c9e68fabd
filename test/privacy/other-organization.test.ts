import { describe, expect, it } from 'vitest';
import { checkProbes } from './check.js';
import { MEMBER_SURFACES } from './member-surfaces.js';
import { usePrivacyWorld } from './world.js';

/**
 * Nothing of an organization in what a member or key of another organization can get from
 * the routes that need a credential (public-surfaces.test.ts calls the others): the same
 * organization as there (test/privacy/world.ts), every such GET route called with its ids
 * (private objects, templates, webhook, policy, support message, batch actions), and no
 * answer's body or headers may hold a marker or any private id, hash or signature.
 */
const { svc, world } = usePrivacyWorld();

const CALLERS: { name: string; headers: () => Record<string, string> }[] = [
  { name: "another organization's owner", headers: () => world().outsider.headers },
  { name: "another organization's API key", headers: () => world().outsiderKey.headers },
];

describe('the table', () => {
  it('has a row for every GET route that needs a credential', () => {
    const credentialed = svc
      .routeTable()
      .filter((r) => r.method === 'GET' && r.auth !== 'none' && r.auth !== 'optional')
      .map((r) => r.url);
    expect(credentialed.length).toBeGreaterThan(25);
    expect(new Set(MEMBER_SURFACES.map((s) => s.route))).toEqual(new Set(credentialed));
  });
});

describe.each(CALLERS)('called with $name', (caller) => {
  it.each(MEMBER_SURFACES.map((s) => [s.route, s] as const))(
    'GET %s shows nothing of the other organization',
    async (_, surface) => {
      const w = world();
      const { leaks, wrong } = await checkProbes(svc, w, caller.headers(), surface.probes(w));
      expect(leaks).toEqual([]);
      expect(wrong).toEqual([]);
    },
  );
});
