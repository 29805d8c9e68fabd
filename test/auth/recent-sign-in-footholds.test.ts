import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect } from 'vitest';
import { createTemplate } from '../helpers/ebus.js';
import { createMember } from '../helpers/fixtures.js';
import { useTestService, type Headers } from '../helpers/harness.js';
import { uniqueEmail } from '../helpers/identity.js';
import { recentSignInCases, type Change } from '../helpers/recent-sign-in.js';

/**
 * Changes that let someone in, or send the organization's events (or a key that signs them)
 * somewhere new, outlive the token that makes them, so a session's sign-in must be recent
 * (docs/auth.md, "Changing credentials"); an API key passes, as servers make these changes
 * with one. The changes that narrow stay open to any live session. Each change runs for each
 * caller: a session signed in just now, one signed in 11 minutes ago, and an API key holding
 * the permission (made while the sign-in was fresh, used 11 minutes later).
 */
const svc = useTestService();
const { post, put, patch } = svc;
const URL_A = 'https://93.184.215.14/hooks';
const URL_B = 'https://93.184.215.15/elsewhere';

const rows = async <T extends Record<string, unknown>>(q: ReturnType<typeof sql>) =>
  (await svc.container.db.execute<T>(q)).rows;
const membersOf = (orgId: string) =>
  rows(sql`SELECT id, role, status FROM members WHERE organization_id = ${orgId} ORDER BY id`);
const settingsOf = (orgId: string) =>
  rows(sql`SELECT settings FROM organizations WHERE id = ${orgId}`);
const webhooksOf = (orgId: string) =>
  rows(sql`SELECT id, url, description, is_active, encode(signing_key, 'hex') AS signing_key
    FROM webhooks WHERE organization_id = ${orgId} AND deleted_at IS NULL ORDER BY id`);

function invite(role: 'member' | 'viewer'): Change {
  return {
    name: `invite a ${role}`,
    guarded: true,
    prepare: async (owner) => ({
      send: (h) =>
        post(`/organizations/${owner.orgId}/members`, { email: uniqueEmail('invitee'), role }, h),
      state: () => membersOf(owner.orgId),
    }),
  };
}

function roleChange(from: 'viewer' | 'member', to: 'viewer' | 'member'): Change {
  return {
    name: `change a ${from}'s role to ${to}`,
    guarded: to === 'member' && from === 'viewer',
    prepare: async (owner) => {
      const target = await createMember(svc, { orgId: owner.orgId, role: from });
      return {
        send: (h) =>
          patch(`/organizations/${owner.orgId}/members/${target.memberId}`, { role: to }, h),
        state: () => membersOf(owner.orgId),
      };
    },
  };
}

function selfSignup(on: boolean): Change {
  return {
    name: `turn self sign-up ${on ? 'on' : 'off'}`,
    guarded: on,
    prepare: async (owner) => {
      if (!on) {
        const res = await patch(
          `/organizations/${owner.orgId}`,
          { settings: { allow_self_signup: true } },
          owner.headers,
        );
        expect(res.statusCode, res.body).toBe(200);
      }
      return {
        send: (h) =>
          patch(`/organizations/${owner.orgId}`, { settings: { allow_self_signup: on } }, h),
        state: () => settingsOf(owner.orgId),
      };
    },
  };
}

/** A change to a webhook the owner made (active unless `inactive`). */
function toWebhook(
  name: string,
  guarded: boolean,
  request: (id: string, h: Headers) => Promise<LightMyRequestResponse>,
  opts: { inactive?: boolean } = {},
): Change {
  return {
    name,
    guarded,
    prepare: async (owner) => {
      const templateId = await createTemplate(svc, owner.orgId, { isPublic: false });
      const made = await post(
        '/webhooks',
        { url: URL_A, rules: [{ template_id: templateId }] },
        owner.headers,
      );
      expect(made.statusCode, made.body).toBe(200);
      const { id } = made.json<{ id: string }>();
      if (opts.inactive) {
        const off = await put(`/webhooks/${id}`, { is_active: false }, owner.headers);
        expect(off.statusCode, off.body).toBe(200);
      }
      return { send: (h) => request(id, h), state: () => webhooksOf(owner.orgId) };
    },
  };
}

const CHANGES: Change[] = [
  invite('member'),
  invite('viewer'),
  roleChange('viewer', 'member'),
  {
    name: 'add a password wallet to the organization (POST /wallets)',
    guarded: true,
    prepare: async (owner) => ({
      send: (h) =>
        post(
          '/wallets',
          {
            organization_id: owner.orgId,
            email: uniqueEmail('added'),
            password: 'correct horse battery',
          },
          h,
        ),
      state: () => membersOf(owner.orgId),
    }),
  },
  selfSignup(true),
  {
    name: 'create a webhook',
    guarded: true,
    prepare: async (owner) => {
      const templateId = await createTemplate(svc, owner.orgId, { isPublic: false });
      return {
        send: (h) => post('/webhooks', { url: URL_B, rules: [{ template_id: templateId }] }, h),
        state: () => webhooksOf(owner.orgId),
      };
    },
  },
  toWebhook("change a webhook's URL", true, (id, h) => put(`/webhooks/${id}`, { url: URL_B }, h)),
  toWebhook("rotate a webhook's signing key", true, (id, h) =>
    post(`/webhooks/${id}/rotate-key`, undefined, h),
  ),
  // Open to any live session: they narrow, or send nothing to a new place.
  roleChange('member', 'viewer'),
  selfSignup(false),
  toWebhook('deactivate a webhook', false, (id, h) =>
    put(`/webhooks/${id}`, { is_active: false }, h),
  ),
  toWebhook(
    'reactivate a webhook to its own URL',
    false,
    (id, h) => put(`/webhooks/${id}`, { is_active: true }, h),
    { inactive: true },
  ),
  toWebhook("save a webhook's own URL with a new description", false, (id, h) =>
    put(`/webhooks/${id}`, { url: URL_A, description: 'renamed' }, h),
  ),
];

describe('changes that outlive the token need a recent sign-in of a session', () => {
  recentSignInCases(svc, CHANGES);
});
