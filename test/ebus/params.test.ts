import { beforeAll, describe, expect, it } from 'vitest';
import {
  createSigner,
  createTemplate,
  fund,
  signEoa,
  snapshot,
  ACTION_FEE,
  type EoaSigner,
} from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';
import { LINK_URL_REASON } from '../../src/lib/link-url.js';

let owner: EoaSigner;
let templateId: string;
let objectId: string;

const METADATA_FIELDS = 'name, description, category, image, edition';

const svc = useTestService();
beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, ACTION_FEE * 10n);
  templateId = await createTemplate(svc, owner.orgId, {
    customSchema: { type: 'object', properties: { seat: { type: 'string' } } },
  });
  const res = await execute(
    await signEoa(svc, owner, { name: 'mint', params: { template_id: templateId }, nonce: 0 }),
  );
  expect(res.statusCode, res.body).toBe(200);
  objectId = res.json().object.id;
});

function execute(payload: unknown) {
  return svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: { ...owner.headers, 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : (payload as object),
  });
}

/** An execute body as JSON text, for values JSON.stringify cannot write (deep or malformed). */
function rawBody(customJson: string): string {
  const expires = new Date(svc.clock.now().getTime() + 60_000).toISOString();
  return (
    `{"action":{"wallet":"${owner.address}","name":"mint","params":{"template_id":"${templateId}",` +
    `"custom":${customJson}},"nonce":1,"expires":"${expires}"},` +
    `"signature":{"type":"eoa","signature":"0x00"}}`
  );
}

describe('action params refusals name what is allowed', () => {
  it('names the allowed metadata fields for an unknown metadata key on mint and on update', async () => {
    const before = await snapshot(svc, owner.orgId, owner.walletId, objectId);
    for (const [name, params] of [
      ['mint', { template_id: templateId, metadata: { name: 'x', colour: 'red' } }],
      ['update', { object_id: objectId, metadata: { colour: 'red' } }],
    ] as const) {
      const res = await execute(await signEoa(svc, owner, { name, params, nonce: 1 }));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe(3);
      expect(res.json().details.fields).toEqual([
        {
          field: 'action.params.metadata.colour',
          reason: `unknown field; allowed: ${METADATA_FIELDS}`,
        },
      ]);
      expect(res.json().message).toContain(METADATA_FIELDS);
    }
    expect(await snapshot(svc, owner.orgId, owner.walletId, objectId)).toEqual(before);
  });

  it('names the allowed params for an unknown param, and does so on prepare too', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/prepare',
      headers: owner.headers,
      payload: {
        action: { name: 'transfer', params: { object_id: objectId, to: owner.address, x: 1 } },
      },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().details.fields).toEqual([
      { field: 'action.params.x', reason: 'unknown field; allowed: object_id, to' },
    ]);
  });

  it('keeps the schema message for other failures', async () => {
    const res = await execute(
      await signEoa(svc, owner, {
        name: 'mint',
        params: { template_id: templateId, metadata: { edition: 0 } },
        nonce: 1,
      }),
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().details.fields[0].field).toBe('action.params.metadata.edition');
    expect(res.json().details.fields[0].reason).not.toMatch(/unknown field/);
  });
});

describe('an image link others could not render safely is refused', () => {
  const image = (url: string) => ({
    id: 'img',
    name: 'a.png',
    type: 'image/png',
    url,
    hash: '0x00',
    is_public: true,
    when_created: '2026-01-01T00:00:00.000Z',
  });

  it('on mint and on update, with 400 code 3 naming the field, and nothing changes', async () => {
    const before = await snapshot(svc, owner.orgId, owner.walletId, objectId);
    for (const url of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,x']) {
      for (const [name, params] of [
        ['mint', { template_id: templateId, metadata: { image: image(url) } }],
        ['update', { object_id: objectId, metadata: { image: image(url) } }],
      ] as const) {
        const res = await execute(await signEoa(svc, owner, { name, params, nonce: 1 }));
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().code).toBe(3);
        expect(res.json().details.fields).toEqual([
          { field: 'action.params.metadata.image.url', reason: LINK_URL_REASON },
        ]);
      }
    }
    expect(await snapshot(svc, owner.orgId, owner.walletId, objectId)).toEqual(before);
  });

  it('takes an https image', async () => {
    const params = { object_id: objectId, metadata: { image: image('https://cdn.example/a.png') } };
    const res = await execute(await signEoa(svc, owner, { name: 'update', params, nonce: 1 }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().object.metadata.image.url).toBe('https://cdn.example/a.png');
  });
});

describe('custom is bounded before the template schema or any recursion reads it', () => {
  it('refuses custom nested deeper than 32 levels with 400 code 3, even 100,000 levels deep', async () => {
    const deep = (levels: number) =>
      execute(rawBody('{"a":' + '['.repeat(levels - 1) + ']'.repeat(levels - 1) + '}'));
    const res = await deep(33);
    expect(res.statusCode, res.body.slice(0, 200)).toBe(400);
    expect(res.json().code).toBe(3);
    expect(res.json().details.fields).toEqual([
      { field: 'action.params.custom', reason: 'nests deeper than 32 levels' },
    ]);
    // Far deeper, the edge guard on every body (src/lib/input-check.ts) refuses it first.
    const far = await deep(100_000);
    expect(far.statusCode, far.body.slice(0, 200)).toBe(400);
    expect(far.json().code).toBe(3);
    expect(far.json().details.fields[0].field).toMatch(/^action\.params\.custom\./);
  });

  it('passes custom 32 levels deep on to the signature check', async () => {
    const res = await execute(rawBody('{"a":' + '['.repeat(31) + ']'.repeat(31) + '}'));
    expect(res.statusCode).toBe(401);
  });

  it('refuses custom that has no canonical JSON form (a lone surrogate) with 400 code 3, not 500', async () => {
    const res = await execute(rawBody('{"s":"\\ud800"}'));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().details.fields[0].field).toMatch(/^action\.params\.custom/);
    expect(res.json().details.fields[0].reason).toMatch(/lone surrogate/);
  });

  it('refuses metadata with a lone surrogate on prepare with 400 code 3, not 500', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/prepare',
      headers: { ...owner.headers, 'content-type': 'application/json' },
      payload: `{"action":{"name":"mint","params":{"template_id":"${templateId}","metadata":{"name":"\\ud800"}}}}`,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe(3);
  });
});
