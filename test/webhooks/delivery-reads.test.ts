import { describe, expect, it } from 'vitest';
import { ROLES, permissionsOfRole, type Permission } from '../../src/lib/permissions.js';
import { DELIVERY_READS } from '../../src/modules/webhooks/reach.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createTemplate } from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

/**
 * A delivery carries the action and the object, private data included, so whatever makes a
 * webhook send also needs the reads it carries (docs/decisions.md, "A webhook needs the reads
 * it sends"). Generated from the table below: every operation, for a key holding every
 * webhooks permission and each subset of the delivery's reads, and for every role.
 */
const svc = useTestService();

const PUBLIC_URL = 'https://93.184.215.14/hooks';
const WEBHOOKS: Permission[] = [
  'webhooks.read',
  'webhooks.create',
  'webhooks.update',
  'webhooks.delete',
];

interface Target {
  webhookId: string;
  templateId: string;
}

interface Operation {
  name: string;
  /** Whether it makes the webhook send (then it needs the delivery's reads). */
  sends: boolean;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url(t: Target): string;
  payload?(t: Target): object;
  /** The status once permitted. */
  allowed: number;
}

const OPERATIONS: Operation[] = [
  {
    name: 'create',
    sends: true,
    method: 'POST',
    url: () => '/webhooks',
    payload: (t) => ({ url: PUBLIC_URL, rules: [{ template_id: t.templateId }] }),
    allowed: 200,
  },
  {
    name: 'change the address',
    sends: true,
    method: 'PUT',
    url: (t) => `/webhooks/${t.webhookId}`,
    payload: () => ({ url: 'https://93.184.215.15/other' }),
    allowed: 200,
  },
  {
    name: 'change the rules',
    sends: true,
    method: 'PUT',
    url: (t) => `/webhooks/${t.webhookId}`,
    payload: (t) => ({ rules: [{ template_id: t.templateId, actions: ['mint'] }] }),
    allowed: 200,
  },
  {
    name: 'change the description',
    sends: false,
    method: 'PUT',
    url: (t) => `/webhooks/${t.webhookId}`,
    payload: () => ({ description: 'renamed' }),
    allowed: 200,
  },
  {
    name: 'switch off',
    sends: false,
    method: 'PUT',
    url: (t) => `/webhooks/${t.webhookId}`,
    payload: () => ({ is_active: false }),
    allowed: 200,
  },
  {
    name: 'switch on',
    sends: true,
    method: 'PUT',
    url: (t) => `/webhooks/${t.webhookId}`,
    payload: () => ({ is_active: true }),
    allowed: 200,
  },
  {
    name: 'redeliver',
    sends: true,
    method: 'POST',
    // No such delivery: once permitted, the lookup answers 404.
    url: (t) => `/webhooks/${t.webhookId}/events/evt_01JZ0000000000000000000000/redeliver`,
    allowed: 404,
  },
  {
    name: 'replay',
    sends: true,
    method: 'POST',
    url: (t) => `/webhooks/${t.webhookId}/replay`,
    payload: () => ({ since: '2026-01-01T00:00:00.000Z', until: '2026-01-02T00:00:00.000Z' }),
    allowed: 200,
  },
  {
    name: 'rotate the key',
    sends: false,
    method: 'POST',
    url: (t) => `/webhooks/${t.webhookId}/rotate-key`,
    allowed: 200,
  },
  { name: 'list', sends: false, method: 'GET', url: () => '/webhooks', allowed: 200 },
];

/** Every subset of the delivery's reads. */
const SUBSETS: Permission[][] = DELIVERY_READS.reduce<Permission[][]>(
  (acc, p) => [...acc, ...acc.map((s) => [...s, p])],
  [[]],
);

async function organization(): Promise<{ owner: TestMember; target: Target }> {
  const owner = await createMember(svc, { role: 'owner' });
  const templateId = await createTemplate(svc, owner.orgId, { isPublic: false });
  const res = await svc.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: owner.headers,
    payload: { url: PUBLIC_URL, rules: [{ template_id: templateId }] },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { owner, target: { webhookId: res.json<{ id: string }>().id, templateId } };
}

async function run(headers: Record<string, string>, op: Operation, t: Target) {
  return svc.app.inject({
    method: op.method,
    url: op.url(t),
    headers,
    ...(op.payload ? { payload: op.payload(t) } : {}),
  });
}

describe('what makes a webhook send', () => {
  it('needs every read a delivery carries, for a key holding every webhooks permission', async () => {
    expect(SUBSETS).toHaveLength(2 ** DELIVERY_READS.length);
    expect(OPERATIONS.some((o) => o.sends) && OPERATIONS.some((o) => !o.sends)).toBe(true);
    for (const reads of SUBSETS) {
      const { owner, target } = await organization();
      const key = await createApiKey(svc, owner, [...WEBHOOKS, ...reads]);
      const permitted = DELIVERY_READS.every((p) => reads.includes(p));
      for (const op of OPERATIONS) {
        const res = await run(key.headers, op, target);
        const what = `${op.name} with [${reads.join(', ')}]`;
        if (op.sends && !permitted) {
          expect(res.statusCode, what).toBe(403);
          const missing = DELIVERY_READS.find((p) => !reads.includes(p))!;
          expect(res.json(), what).toMatchObject({
            code: 7,
            message: expect.stringContaining(`missing permission ${missing}`),
          });
        } else {
          expect(res.statusCode, `${what}: ${res.body}`).toBe(op.allowed);
        }
      }
    }
  });

  it('is refused to a key holding the reads but not the webhooks permission', async () => {
    const { owner, target } = await organization();
    const key = await createApiKey(svc, owner, [...DELIVERY_READS]);
    for (const op of OPERATIONS) {
      const res = await run(key.headers, op, target);
      expect(res.statusCode, op.name).toBe(403);
      expect(res.json<{ code: number }>().code).toBe(7);
    }
  });

  it('is permitted to a role exactly when it holds the operation and the reads', async () => {
    const create = OPERATIONS.find((o) => o.name === 'create')!;
    for (const role of ROLES) {
      const { owner, target } = await organization();
      const m = await createMember(svc, { role, orgId: owner.orgId });
      const perms = permissionsOfRole(role);
      const res = await run(m.headers, create, target);
      const permitted = perms.has('webhooks.create') && DELIVERY_READS.every((p) => perms.has(p));
      expect(res.statusCode, `${role}: ${res.body}`).toBe(permitted ? 200 : 403);
    }
  });

  it('is 404 to a key of another organization holding everything', async () => {
    const { target } = await organization();
    const { owner: stranger, target: own } = await organization();
    const key = await createApiKey(svc, stranger, [...WEBHOOKS, ...DELIVERY_READS]);
    // Its rules name its own template: the other organization's webhook is what it aims at.
    const aimed = { webhookId: target.webhookId, templateId: own.templateId };
    for (const op of OPERATIONS.filter((o) => o.url(target).includes(target.webhookId))) {
      const res = await run(key.headers, op, aimed);
      expect(res.statusCode, `${op.name}: ${res.body}`).toBe(404);
    }
  });
});
