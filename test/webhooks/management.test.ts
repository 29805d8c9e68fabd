import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { newId } from '../../src/lib/ids.js';
import { insertWebhook } from '../../src/modules/webhooks/repo/webhooks.js';
import { createTemplate } from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { expectRefusals } from '../helpers/route-security.js';
import { useTestService } from '../helpers/harness.js';

/** Issue 20 acceptance 1 and 2: managing webhooks and the addresses they may have. */
const PUBLIC_URL = 'https://93.184.215.14/hooks';

const svc = useTestService();

const send = (
  m: TestMember,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) =>
  svc.app.inject({
    method,
    url,
    headers: m.headers,
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });

async function ownerWithTemplate() {
  const owner = await createMember(svc);
  const templateId = await createTemplate(svc, owner.orgId, { isPublic: false });
  return { owner, templateId };
}

async function createWebhook(
  m: TestMember,
  templateId: string,
  extra: Record<string, unknown> = {},
) {
  const res = await send(m, 'POST', '/webhooks', {
    url: PUBLIC_URL,
    rules: [{ template_id: templateId }],
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ id: string; signing_key: string; [k: string]: unknown }>();
}

function expectInvalid(res: { statusCode: number; json(): unknown }, field: string) {
  expect(res.statusCode).toBe(400);
  const body = res.json() as {
    code: number;
    details: { fields: { field: string; reason: string }[] };
  };
  expect(body.code).toBe(3);
  expect(body.details.fields.map((f) => f.field)).toContain(field);
  return body;
}

describe('the test-only settings', () => {
  it('are off by default and then not announced', () => {
    expect(svc.config.webhooks).toMatchObject({ allowLoopback: false, caFile: null });
    expect(svc.logs.some((l) => String(l.msg).startsWith('WEBHOOK_'))).toBe(false);
  });
});

describe('POST /webhooks', () => {
  it('answers the webhook and a 64-hex signing key that no other answer shows', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId, { description: 'orders' });
    expect(created).toEqual({
      id: expect.stringMatching(/^whk_[0-9A-Z]{26}$/),
      url: PUBLIC_URL,
      rules: [{ template_id: templateId, actions: [], addresses: [] }],
      description: 'orders',
      is_active: true,
      when_created: expect.any(String),
      when_modified: expect.any(String),
      signing_key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const listed = await send(owner, 'GET', '/webhooks');
    const one = await send(owner, 'GET', `/webhooks/${created.id}`);
    for (const res of [listed, one]) {
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(created.signing_key);
      expect(res.body).not.toContain('signing_key');
    }
    expect(JSON.stringify(svc.logs)).not.toContain(created.signing_key);
    // Stored so that it can sign: the key's own bytes.
    const { rows } = await svc.container.db.execute<{ k: string }>(
      sql`SELECT encode(signing_key, 'hex') AS k FROM webhooks WHERE id = ${created.id}`,
    );
    expect(rows[0]!.k).toBe(created.signing_key);
  });

  it('never lets a failed write carry the key into an error text', async () => {
    const key = randomBytes(32);
    const failed = insertWebhook(svc.container.db, {
      id: newId('webhook'),
      orgId: newId('organization'),
      url: PUBLIC_URL,
      description: '',
      rules: [],
      signingKey: key,
      now: svc.clock.now(),
    });
    const err = (await failed.catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('webhook key write failed (SQLSTATE 23503)');
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(key.toString('hex'));
    expect(err.cause).toBeUndefined();
  });

  it('keeps rules as given: action names, lowercase signer addresses without repeats', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const addr = '0xAbCdEf0123456789abcdef0123456789ABCDEF01';
    const created = await createWebhook(owner, templateId, {
      rules: [
        {
          template_id: templateId,
          actions: ['mint', 'transfer'],
          addresses: [addr, addr.toLowerCase()],
        },
        { template_id: templateId, actions: [] },
      ],
    });
    expect(created.rules).toEqual([
      { template_id: templateId, actions: ['mint', 'transfer'], addresses: [addr.toLowerCase()] },
      { template_id: templateId, actions: [], addresses: [] },
    ]);
  });

  it('accepts a public template of another organization', async () => {
    const { owner } = await ownerWithTemplate();
    const other = await createMember(svc);
    const publicTemplate = await createTemplate(svc, other.orgId, { isPublic: true });
    await createWebhook(owner, publicTemplate);
  });

  it('refuses a sixth webhook with 400 code 3, and takes one again after a delete', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createWebhook(owner, templateId)).id);
    const sixth = await send(owner, 'POST', '/webhooks', {
      url: PUBLIC_URL,
      rules: [{ template_id: templateId }],
    });
    expect(sixth.statusCode).toBe(400);
    expect(sixth.json()).toMatchObject({ code: 3, message: expect.stringContaining('at most 5') });
    expect((await send(owner, 'DELETE', `/webhooks/${ids[0]}`)).statusCode).toBe(200);
    await createWebhook(owner, templateId);
  });

  it.each([
    ['no rules', { rules: [] }, 'rules'],
    ['a rule without template_id', { rules: [{ actions: ['mint'] }] }, 'rules.0.template_id'],
    ['a malformed template id', { rules: [{ template_id: 'tpl_nope' }] }, 'rules.0.template_id'],
    [
      'an unknown action name',
      { rules: [{ template_id: '$T', actions: ['burn'] }] },
      'rules.0.actions.0',
    ],
    [
      'a malformed address',
      { rules: [{ template_id: '$T', addresses: ['0x12'] }] },
      'rules.0.addresses.0',
    ],
    [
      'an unknown field in a rule',
      { rules: [{ template_id: '$T', events: [] }] },
      'rules.0.events',
    ],
    ['no url', { url: undefined }, 'url'],
    ['a description over 500 characters', { description: 'x'.repeat(501) }, 'description'],
  ])('refuses %s with 400 code 3 naming the field', async (_why, change, field) => {
    const { owner, templateId } = await ownerWithTemplate();
    const body = JSON.parse(
      JSON.stringify({
        url: PUBLIC_URL,
        rules: [{ template_id: templateId }],
        ...change,
      }).replaceAll('$T', templateId),
    );
    expectInvalid(await send(owner, 'POST', '/webhooks', body), field);
  });

  it('refuses a template that does not exist, and a private one of another organization', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const other = await createMember(svc);
    const privateOther = await createTemplate(svc, other.orgId, { isPublic: false });
    for (const t of ['tpl_01JZ0000000000000000000000', privateOther]) {
      const res = await send(owner, 'POST', '/webhooks', {
        url: PUBLIC_URL,
        rules: [{ template_id: templateId }, { template_id: t }],
      });
      expectInvalid(res, 'rules.1.template_id');
    }
  });

  it('refuses callers without webhooks.create', async () => {
    await expectRefusals(
      svc,
      {
        method: 'POST',
        url: '/webhooks',
        payload: { url: PUBLIC_URL, rules: [{ template_id: 'tpl_01JZ0000000000000000000000' }] },
      },
      { roleWithout: 'member', keyWithout: 'webhooks.create' },
    );
  });
});

describe('webhook addresses (checked when saved)', () => {
  it.each([
    ['http', 'http://93.184.215.14/h', 'must use https'],
    ['a username and password', 'https://user:pw@93.184.215.14/h', 'username or password'],
    ['a username alone', 'https://user@93.184.215.14/h', 'username or password'],
    ['not a URL', 'not a url', 'is not a URL'],
    ['loopback', 'https://127.0.0.1/h', 'loopback'],
    ['loopback elsewhere in 127/8', 'https://127.8.9.10/h', 'loopback'],
    ['localhost by name', 'https://localhost/h', 'localhost resolves to a non-public address'],
    ['private 10/8', 'https://10.1.2.3/h', 'private'],
    ['private 172.16/12', 'https://172.16.0.1/h', 'private'],
    ['private 192.168/16', 'https://192.168.1.1/h', 'private'],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest', 'link-local'],
    ['carrier-grade NAT', 'https://100.64.0.1/h', 'carrier-grade NAT'],
    ['unspecified', 'https://0.0.0.0/h', 'unspecified'],
    ['multicast', 'https://224.0.0.1/h', 'multicast'],
    ['broadcast', 'https://255.255.255.255/h', 'broadcast'],
    ['IPv6 loopback', 'https://[::1]/h', 'loopback'],
    ['IPv6 unspecified', 'https://[::]/h', 'unspecified'],
    ['IPv6 unique local', 'https://[fd00::1]/h', 'unique local'],
    ['IPv6 link-local', 'https://[fe80::1]/h', 'link-local'],
    ['IPv4-mapped IPv6', 'https://[::ffff:127.0.0.1]/h', 'IPv4-mapped'],
    ['IPv4-mapped IPv6 of a public address', 'https://[::ffff:93.184.215.14]/h', 'IPv4-mapped'],
    ['NAT64', 'https://[64:ff9b::7f00:1]/h', 'NAT64'],
    ['IPv4-compatible IPv6', 'https://[::7f00:1]/h', 'reserved IPv6'],
    ['decimal IPv4', 'https://2130706433/h', 'dotted quad'],
    ['hex IPv4', 'https://0x7f000001/h', 'dotted quad'],
    ['octal IPv4', 'https://0177.0.0.1/h', 'dotted quad'],
    ['short IPv4', 'https://127.1/h', 'dotted quad'],
    ['decimal spelling of a public address', 'https://1572395790/h', 'dotted quad'],
    ['a documentation address', 'https://192.0.2.1/h', 'reserved'],
  ])('refuses %s with 400 code 3 and a reason', async (_why, url, reason) => {
    const { owner, templateId } = await ownerWithTemplate();
    const res = await send(owner, 'POST', '/webhooks', {
      url,
      rules: [{ template_id: templateId }],
    });
    const body = expectInvalid(res, 'url');
    expect(body.details.fields[0]!.reason).toContain(reason);
  });

  it('refuses a name that resolves to a non-public address without telling the address', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    // An internal name would answer an internal address (`postgres` → 172.18.0.2); `localhost`
    // answers loopback wherever the test runs, without asking any name server.
    const res = await send(owner, 'POST', '/webhooks', {
      url: 'https://localhost/h',
      rules: [{ template_id: templateId }],
    });
    const body = expectInvalid(res, 'url');
    expect(body.details.fields[0]!.reason).toBe('localhost resolves to a non-public address');
    expect(res.body).not.toMatch(/127\.0\.0\.1|::1|loopback/);
  });

  it('accepts a public IPv4 and a global IPv6 address', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    for (const url of [
      'https://93.184.215.14:8443/a?b=c',
      'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/x',
    ]) {
      const res = await send(owner, 'POST', '/webhooks', {
        url,
        rules: [{ template_id: templateId }],
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  });

  it('checks a changed address too', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    const res = await send(owner, 'PUT', `/webhooks/${created.id}`, { url: 'https://10.0.0.1/x' });
    expectInvalid(res, 'url');
  });
});

describe('GET /webhooks', () => {
  it('lists the organization’s webhooks only, paged by the list conventions', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const a = await createWebhook(owner, templateId);
    svc.clock.advance(1);
    const b = await createWebhook(owner, templateId);
    const other = await ownerWithTemplate();
    await createWebhook(other.owner, other.templateId);
    const first = await send(owner, 'GET', '/webhooks?limit=1');
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.webhooks.map((w: { id: string }) => w.id)).toEqual([b.id]);
    expect(page1.has_more).toBe(true);
    const page2 = (await send(owner, 'GET', `/webhooks?limit=1&next=${page1.next}`)).json();
    expect(page2.webhooks.map((w: { id: string }) => w.id)).toEqual([a.id]);
    expect(page2).toMatchObject({ has_more: false, next: '' });
  });

  it('refuses a limit over 100 and callers without webhooks.read', async () => {
    const { owner } = await ownerWithTemplate();
    expectInvalid(await send(owner, 'GET', '/webhooks?limit=101'), 'limit');
    await expectRefusals(
      svc,
      { method: 'GET', url: '/webhooks' },
      { roleWithout: 'member', keyWithout: 'webhooks.read' },
    );
  });
});

describe('GET, PUT and DELETE /webhooks/{webhookId}', () => {
  it('answers 404 code 5 for another organization’s webhook and 400 code 3 for a malformed id', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      await expectRefusals(
        svc,
        {
          method,
          url: `/webhooks/${created.id}`,
          ...(method === 'PUT' ? { payload: { description: 'x' } } : {}),
        },
        { otherOrgMember: true },
      );
      expectInvalid(
        await send(owner, method, '/webhooks/whk_nope', method === 'PUT' ? {} : undefined),
        'webhookId',
      );
    }
  });

  it('changes only the fields given', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId, { description: 'before' });
    svc.clock.advance(1000);
    const res = await send(owner, 'PUT', `/webhooks/${created.id}`, { description: 'after' });
    expect(res.statusCode, res.body).toBe(200);
    const { signing_key: _k, ...before } = created;
    expect(res.json()).toEqual({
      ...before,
      description: 'after',
      when_modified: expect.any(String),
    });
    expect(res.json().when_modified).not.toBe(created.when_modified);
    const rules = [{ template_id: templateId, actions: ['redeem'], addresses: [] }];
    const changed = await send(owner, 'PUT', `/webhooks/${created.id}`, {
      rules,
      url: 'https://93.184.215.15/new',
    });
    expect(changed.json()).toMatchObject({
      rules,
      url: 'https://93.184.215.15/new',
      description: 'after',
    });
    expect((await send(owner, 'GET', `/webhooks/${created.id}`)).json()).toEqual(changed.json());
  });

  it('switches a webhook off and on again with is_active', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    const off = await send(owner, 'PUT', `/webhooks/${created.id}`, { is_active: false });
    expect(off.json().is_active).toBe(false);
    const on = await send(owner, 'PUT', `/webhooks/${created.id}`, { is_active: true });
    expect(on.json().is_active).toBe(true);
  });

  it('refuses bad changes with 400 code 3', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    expectInvalid(await send(owner, 'PUT', `/webhooks/${created.id}`, { rules: [] }), 'rules');
    expectInvalid(
      await send(owner, 'PUT', `/webhooks/${created.id}`, { is_active: 'yes' }),
      'is_active',
    );
    expectInvalid(
      await send(owner, 'PUT', `/webhooks/${created.id}`, { signing_key: 'ab' }),
      'signing_key',
    );
  });

  it('deletes a webhook: afterwards it is 404 and not listed', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    expect((await send(owner, 'DELETE', `/webhooks/${created.id}`)).json()).toEqual({});
    expect((await send(owner, 'GET', `/webhooks/${created.id}`)).json()).toMatchObject({ code: 5 });
    expect((await send(owner, 'DELETE', `/webhooks/${created.id}`)).statusCode).toBe(404);
    expect((await send(owner, 'GET', '/webhooks')).json().webhooks).toEqual([]);
  });

  it('refuses callers without the permission', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const { id } = await createWebhook(owner, templateId);
    await expectRefusals(
      svc,
      { method: 'GET', url: `/webhooks/${id}` },
      { keyWithout: 'webhooks.read' },
    );
    await expectRefusals(
      svc,
      { method: 'PUT', url: `/webhooks/${id}`, payload: { description: 'x' } },
      { roleWithout: 'member', keyWithout: 'webhooks.update' },
    );
    await expectRefusals(
      svc,
      { method: 'DELETE', url: `/webhooks/${id}` },
      { roleWithout: 'member', keyWithout: 'webhooks.delete' },
    );
  });
});

describe('POST /webhooks/{webhookId}/rotate-key', () => {
  it('answers a new key and keeps the old one signing for 24 hours', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const created = await createWebhook(owner, templateId);
    const res = await send(owner, 'POST', `/webhooks/${created.id}/rotate-key`);
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json();
    expect(rotated.signing_key).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.signing_key).not.toBe(created.signing_key);
    const { rows } = await svc.container.db.execute<{ k: string; p: string; until: string }>(sql`
      SELECT encode(signing_key, 'hex') AS k, encode(previous_signing_key, 'hex') AS p,
        previous_key_until::text AS until FROM webhooks WHERE id = ${created.id}`);
    expect(rows[0]!.k).toBe(rotated.signing_key);
    expect(rows[0]!.p).toBe(created.signing_key);
    expect(new Date(rows[0]!.until).getTime() - svc.clock.now().getTime()).toBe(24 * 3_600_000);
  });

  it('refuses another organization and callers without webhooks.update', async () => {
    const { owner, templateId } = await ownerWithTemplate();
    const { id } = await createWebhook(owner, templateId);
    await expectRefusals(
      svc,
      { method: 'POST', url: `/webhooks/${id}/rotate-key` },
      { otherOrgMember: true, roleWithout: 'member', keyWithout: 'webhooks.update' },
    );
  });
});
