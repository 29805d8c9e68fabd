import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { getTemplateForAction, validateCustom } from '../../src/modules/templates/service.js';
import {
  createSigner,
  createTemplate as insertTemplate,
  fund,
  signEoa,
  snapshot,
  ACTION_FEE,
  type EoaSigner,
} from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService } from '../helpers/harness.js';

let owner: TestMember;

const svc = useTestService();
beforeAll(async () => {
  owner = await createMember(svc, { role: 'owner' });
});

const createTemplate = (m: TestMember, custom_schema: unknown) =>
  svc.app.inject({
    method: 'POST',
    url: '/templates',
    headers: m.headers,
    payload: { name: 'T', actions: ['mint', 'update'], custom_schema } as object,
  });

const stringSchema = (pattern: string) => ({
  type: 'object',
  properties: { s: { type: 'string', pattern } },
});

async function mint(signer: EoaSigner, templateId: string, custom: unknown, nonce = 0) {
  const body = await signEoa(svc, signer, {
    name: 'mint',
    params: { template_id: templateId, custom },
    nonce,
  });
  const t0 = performance.now();
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: body,
  });
  return { res, ms: performance.now() - t0 };
}

describe('catastrophic patterns in custom_schema', () => {
  it('refuses backreferences on save and matches the others in linear time on 10,000 characters', async () => {
    const cases: [string, boolean][] = [
      ['^(a+)+$', false],
      ['(a|a)*', true],
      ['(a*)*b', false],
      ['^(a+)+\\1$', false],
    ];
    const long = 'a'.repeat(10_000) + '!';
    for (const [pattern, matches] of cases) {
      const res = await createTemplate(owner, stringSchema(pattern));
      if (pattern.includes('\\1')) {
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().code).toBe(3);
        expect(res.json().details.fields[0]).toEqual({
          field: 'custom_schema.properties.s.pattern',
          reason: 'backreferences are not supported',
        });
        continue;
      }
      expect(res.statusCode, res.body).toBe(200);
      const template = (await getTemplateForAction(svc.container.db, res.json().id))!;
      validateCustom(template, { s: 'aaa!' }); // compiles and warms the validator
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const check = validateCustom(template, { s: long });
        times.push(performance.now() - t0);
        expect(check.ok, pattern).toBe(matches);
      }
      expect(times.sort((a, b) => a - b)[2], pattern).toBeLessThan(10);
    }
  });

  it("refuses at once the attacker's mint: a zero-balance account, ^(a+)+$ and 29 a's and a !", async () => {
    const attacker = await createSigner(svc);
    const res = await createTemplate(attacker, stringSchema('^(a+)+$'));
    expect(res.statusCode, res.body).toBe(200);
    const before = await snapshot(svc, attacker.orgId, attacker.walletId);
    const { res: minted, ms } = await mint(attacker, res.json().id, { s: 'a'.repeat(29) + '!' });
    expect(minted.statusCode, minted.body).toBe(400);
    expect(minted.json().code).toBe(3);
    expect(minted.json().details.fields[0].field).toBe('custom.s');
    expect(ms).toBeLessThan(2000);
    expect(await snapshot(svc, attacker.orgId, attacker.walletId)).toEqual(before);
  });

  it('applies a mint whose custom matches a pattern that needs translation (\\s, named groups, \\u)', async () => {
    const signer = await createSigner(svc);
    await fund(svc, signer.orgId, ACTION_FEE * 2n);
    const res = await createTemplate(signer, stringSchema('^(?<w>\\S+)\\s\\u00e9$'));
    expect(res.statusCode, res.body).toBe(200);
    const ok = await mint(signer, res.json().id, { s: 'caf\u00a0é' });
    expect(ok.res.statusCode, ok.res.body).toBe(200);
    const refused = await mint(signer, res.json().id, { s: 'café' }, 1);
    expect(refused.res.statusCode).toBe(400);
  });
});

describe('custom_schema limits on save', () => {
  const deep = (levels: number): Record<string, unknown> => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 1; i < levels; i++) schema = { not: schema };
    return schema;
  };

  it.each([
    ['nests deeper than 32 levels', deep(33), 'custom_schema'],
    ['is larger than 16 KiB', { type: 'object', description: 'x'.repeat(17_000) }, 'custom_schema'],
    [
      'has more than 256 subschemas',
      { type: 'number', anyOf: Array.from({ length: 300 }, () => ({ maximum: 0 })) },
      'custom_schema',
    ],
    [
      'lists more than 512 enum values',
      { enum: Array.from({ length: 600 }, (_, i) => i) },
      'custom_schema.enum',
    ],
    ['uses lookahead', stringSchema('^(?=a)'), 'custom_schema.properties.s.pattern'],
    [
      'uses a backreference in patternProperties',
      { type: 'object', patternProperties: { '(a)\\1': true } },
      'custom_schema.patternProperties.(a)\\1',
    ],
    [
      'refers outside itself',
      { type: 'object', properties: { a: { $ref: 'https://example.com/x.json' } } },
      'custom_schema.properties.a.$ref',
    ],
    [
      'uses the url format',
      { type: 'object', properties: { u: { type: 'string', format: 'url' } } },
      'custom_schema.properties.u.format',
    ],
  ])('refuses a schema that %s with 400 code 3 naming the field', async (_, schema, field) => {
    const res = await createTemplate(owner, schema);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe(3);
    expect(res.json().details.fields[0].field).toBe(field);
    expect(res.json().message).not.toMatch(/\n\s+at |\.[jt]s:\d/);
  });

  it('refuses at once a schema of patterns too many or too large together', async () => {
    // 16 KiB of distinct patterns of about 1,000 instructions each (\\S{999}, .{999}, …).
    const wide: Record<string, true> = {};
    for (let i = 0; JSON.stringify(wide).length < 16_000; i++) {
      wide[`${['\\S', '.', '\\w', '\\d'][i % 4]}{${999 - Math.floor(i / 4)}}`] = true;
    }
    const few = Object.fromEntries(Object.entries(wide).slice(0, 250));
    const cases: [Record<string, true>, string][] = [
      [wide, 'has more than 256 subschemas'],
      [few, 'its patterns are too large together (more than 10000 instructions)'],
    ];
    for (const [patternProperties, reason] of cases) {
      const t0 = performance.now();
      const res = await createTemplate(owner, { type: 'object', patternProperties });
      const ms = performance.now() - t0;
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe(3);
      expect(ms, reason).toBeLessThan(150);
      expect(res.json().message).toBe(`invalid custom_schema: ${reason}`);
    }
  });

  it('refuses a $ref to a place that is not a subschema, where the limits do not look', async () => {
    const hidden = Array.from({ length: 800 }, () => ({ type: 'string' }));
    for (const [where, ref] of [
      ['examples', '#/examples/0'],
      ['default', '#/default'],
      ['const', '#/const'],
    ] as const) {
      const res = await createTemplate(owner, {
        [where]: where === 'examples' ? [{ anyOf: hidden }] : { anyOf: hidden },
        allOf: [{ $ref: ref }],
      });
      expect(res.statusCode, ref).toBe(400);
      expect(res.json().code).toBe(3);
      expect(res.json().details.fields[0].field).toBe('custom_schema.allOf.0.$ref');
    }
    const ok = await createTemplate(owner, {
      type: 'object',
      $defs: { x: { type: 'string', pattern: '^x' } },
      properties: { a: { $ref: '#/$defs/x' }, b: { $ref: '#/properties/a' } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('refuses the same on PUT, and keeps the saved schema', async () => {
    const created = await createTemplate(owner, stringSchema('^a'));
    const id = created.json().id as string;
    const res = await svc.app.inject({
      method: 'PUT',
      url: `/templates/${id}`,
      headers: owner.headers,
      payload: { custom_schema: stringSchema('(a)\\1') },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details.fields[0].field).toBe('custom_schema.properties.s.pattern');
    const got = await svc.app.inject({
      method: 'GET',
      url: `/templates/${id}`,
      headers: owner.headers,
    });
    expect(got.json().custom_schema).toEqual(stringSchema('^a'));
  });

  it('accepts local $refs, formats other than url and a schema at the limits', async () => {
    const res = await createTemplate(owner, {
      type: 'object',
      definitions: { code: { type: 'string', pattern: '^[A-Z]{3}$' } },
      properties: {
        from: { $ref: '#/definitions/code' },
        to: { $ref: '#/definitions/code' },
        at: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri' },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const atLimit = await createTemplate(owner, deep(32));
    expect(atLimit.statusCode, atLimit.body).toBe(200);
  });
});

describe('the cost of checking custom on mint', () => {
  it('refuses custom that would take the schema too long to check, before running it', async () => {
    const signer = await createSigner(svc);
    await fund(svc, signer.orgId, ACTION_FEE * 2n);
    const res = await createTemplate(signer, {
      type: 'object',
      properties: {
        n: {
          type: 'array',
          items: { type: 'number', anyOf: Array.from({ length: 250 }, () => ({ maximum: 0 })) },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const before = await snapshot(svc, signer.orgId, signer.walletId);
    const { res: refused, ms } = await mint(signer, res.json().id, {
      n: Array.from({ length: 7000 }, () => 1),
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().code).toBe(3);
    expect(refused.json().details.fields[0]).toMatchObject({
      field: 'custom',
      reason: expect.stringMatching(/too costly/),
    });
    expect(ms).toBeLessThan(2000);
    expect(await snapshot(svc, signer.orgId, signer.walletId)).toEqual(before);
    const { res: small } = await mint(signer, res.json().id, { n: [-1, -2] });
    expect(small.statusCode, small.body).toBe(200);
  });

  it('refuses mints on a template saved before the limits whose schema breaks one, with 400 code 3', async () => {
    const signer = await createSigner(svc);
    await fund(svc, signer.orgId, ACTION_FEE * 2n);
    const templateId = await insertTemplate(svc, signer.orgId, {
      customSchema: stringSchema('^(a+)+\\1$'),
    });
    const before = await snapshot(svc, signer.orgId, signer.walletId);
    const { res } = await mint(signer, templateId, { s: 'aa' });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe(3);
    expect(res.json().message).toMatch(/custom_schema/);
    expect(await snapshot(svc, signer.orgId, signer.walletId)).toEqual(before);
  });
});
