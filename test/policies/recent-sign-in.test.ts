import { sql } from 'drizzle-orm';
import { describe, expect } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { permissionsOfRole } from '../../src/lib/permissions.js';
import type { LimitField } from '../../src/modules/policies/looser.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';
import { recentSignInCases, type Change } from '../helpers/recent-sign-in.js';

/**
 * Lifting a spend policy's limits needs a recent sign-in of a session (docs/policies.md,
 * "Lifting a limit"): deleting a policy, and replacing its limits with limits that allow more
 * in any field (a row per field). Tightening, or sending the same limits again, stays open to
 * any live session; an API key passes. The policy binds a member's wallet and was set by an
 * admin's key, so the owner's session and an admin key may both change it.
 */
const svc = useTestService();
const { post, put, del } = svc;

const [T1, T2, T3, T4] = [1, 2, 3, 4].map(() => newId('template'));

const STORED = {
  name: 'limits',
  period: 'hour',
  spend_cap_wei: '1000000',
  max_actions: 10,
  allowed_actions: ['mint', 'transfer', 'update'],
  denied_actions: ['redeem'],
  allowed_templates: [T1, T2],
  denied_templates: [T3],
  max_fee_wei: '5000',
};

/** Makes the policy (STORED on a member's wallet, set by an admin's key); answers its id. */
async function storedPolicy(owner: TestMember): Promise<string> {
  const target = await createMember(svc, { orgId: owner.orgId, role: 'member' });
  const setter = await createApiKey(svc, owner, [...permissionsOfRole('admin')]);
  const made = await post(
    '/policies',
    { ...STORED, target_type: 'wallet', target_id: target.walletId },
    setter.headers,
  );
  expect(made.statusCode, made.body).toBe(200);
  return made.json<{ id: string }>().id;
}

const policyRow = async (id: string) =>
  (await svc.container.db.execute(sql`SELECT * FROM policies WHERE id = ${id}`)).rows;

function replace(name: string, guarded: boolean, limits: Record<string, unknown>): Change {
  return {
    name,
    guarded,
    prepare: async (owner) => {
      const id = await storedPolicy(owner);
      return { send: (h) => put(`/policies/${id}`, limits, h), state: () => policyRow(id) };
    },
  };
}

/** For each limit, a change of it alone that allows more (undefined: the limit left out). */
const LOOSER: Record<LimitField, [string, unknown]> = {
  period: ['a longer window (its use starts afresh)', 'day'],
  spend_cap_wei: ['raised', '1000001'],
  max_actions: ['left out', undefined],
  allowed_actions: ['with one more action', ['mint', 'transfer', 'update', 'drop']],
  denied_actions: ['emptied', []],
  allowed_templates: ['with another template', [T1, T2, T4]],
  denied_templates: ['left out', undefined],
  max_fee_wei: ['raised', '5001'],
};

const CHANGES: Change[] = [
  {
    name: 'delete a policy',
    guarded: true,
    prepare: async (owner) => {
      const id = await storedPolicy(owner);
      return { send: (h) => del(`/policies/${id}`, h), state: () => policyRow(id) };
    },
  },
  ...Object.entries(LOOSER).map(([field, [how, value]]) => {
    const { [field]: _, ...others } = STORED as Record<string, unknown>;
    return replace(`replace with ${field} ${how}`, true, {
      ...others,
      ...(value === undefined ? {} : { [field]: value }),
    });
  }),
  // Open to any live session: nothing allows more.
  replace('replace with every limit tighter', false, {
    name: 'tighter',
    period: 'hour',
    spend_cap_wei: '999999',
    max_actions: 9,
    allowed_actions: ['mint'],
    denied_actions: ['redeem', 'drop'],
    allowed_templates: [T1],
    denied_templates: [T3, T2],
    max_fee_wei: '4999',
  }),
  replace('replace with the same limits (lists in another order) and a new name', false, {
    ...STORED,
    name: 'renamed',
    allowed_actions: [...STORED.allowed_actions].reverse(),
    allowed_templates: [T2, T1],
  }),
];

describe("lifting a spend policy's limits needs a recent sign-in of a session", () => {
  recentSignInCases(svc, CHANGES);
});
