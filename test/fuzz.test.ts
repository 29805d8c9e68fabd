import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idKindOfPattern, newId, type IdKind } from '../src/lib/ids.js';
import { allPermissions, createApiKey, type TestApiKey } from './helpers/api-keys.js';
import { createMember, type TestMember } from './helpers/fixtures.js';
import { insertObject, insertTemplate } from './helpers/objects.js';
import { startTestService, type TestService } from './helpers/service.js';

/**
 * Property-based fuzzing of every operation /openapi.json describes: hostile path ids,
 * query strings, bodies and headers (NUL characters, lone surrogates, 1 MB strings, 20,000
 * levels of nesting, `__proto__` keys, wrong types, forged cursors, dates PostgreSQL
 * refuses), sent with no credential, a bearer token and an API key. Whatever is sent, the
 * answer is never a 5xx, every 4xx is the flat `{code, message}` body, and /readyz stays 200.
 *
 * FUZZ_RUNS sets the requests per operation (default 16, about 20 s here); FUZZ_SEED the
 * seed (fixed by default, so a failure repeats). For a longer hunt:
 *   FUZZ_RUNS=500 FUZZ_SEED=$RANDOM npx vitest run test/fuzz.test.ts
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 16);
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
};

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  schema?: Schema;
}

interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  parameters: Parameter[];
  body: Schema | null;
}

interface FuzzRequest {
  method: Operation['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

// ---- hostile values --------------------------------------------------------------------

/** Stands for 20,000 nested arrays: spliced into the JSON text after stringifying. */
const DEEP = '\u0001deep\u0001';
const DEEP_JSON = '['.repeat(20_000) + ']'.repeat(20_000);
const MEGABYTE = 'x'.repeat(1024 * 1024);

const BAD_DATES = [
  '2024',
  '-1',
  '2024-06-31',
  '2024-06-31T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '2024-01-01T00:00:00+23:59',
  '2024-01-01T23:59:60Z',
  '2024-01-01T23:59:60.5Z',
  '2024-01-01T24:00:00Z',
  '9999-12-31T23:59:59-15:59',
  '275760-09-13T00:00:00Z',
  '2024-01-01T00:00:00.1234567891Z',
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  {
    weight: 8,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.oneof(fc.constant('\u0000'), loneSurrogate))
      .map(([s, bad]) => s + bad + s),
  },
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      '',
      '\u0000',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      '%',
      '%00',
      "' OR 1=1 --",
      '../../etc/passwd',
      '-1',
      '1e309',
      'NaN',
      'null',
      ...BAD_DATES,
    ),
  },
  { weight: 1, arbitrary: fc.constant(MEGABYTE) },
);

/** Any JSON-ish value, with hostile strings and keys, a few levels deep. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
    fc.constantFrom(null, true, false, 0, -1, Number.MAX_SAFE_INTEGER + 2, 1e308, DEEP),
    fc.array(tie('value'), { maxLength: 3 }),
    fc
      .array(fc.tuple(hostileString, tie('value')), { maxLength: 3 })
      .map((entries) => Object.fromEntries(entries)),
  ),
})).value;

const base64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

const forgedCursor: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      s: fc.constantFrom('when_created', 'when_modified', 'name', 'last_used_at', '__proto__'),
      o: fc.constantFrom('asc', 'desc', 'sideways'),
      v: fc.oneof(fc.constantFrom(...BAD_DATES, '2026-01-01T00:00:00.000Z'), hostileJson),
      i: fc.oneof(fc.constant(newId('object')), hostileString),
    })
    .map(base64url),
  hostileString,
);

const sortBy = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'when_created', 'name'),
  hostileString,
);

// ---- values shaped by the schema -------------------------------------------------------

/** Real ids of the fuzzing organization by kind, so handlers get past the lookup. */
let realIds: Partial<Record<IdKind, string>> = {};

function idFor(kind: IdKind): fc.Arbitrary<string> {
  const real = realIds[kind];
  return real ? fc.oneof(fc.constant(real), fc.constant(newId(kind))) : fc.constant(newId(kind));
}

/**
 * A string for `schema`: with `fit`, one the schema accepts (so the handler runs), else
 * mostly hostile.
 */
function stringFor(schema: Schema, name: string, fit: boolean): fc.Arbitrary<string> {
  const kind = schema.pattern ? idKindOfPattern(schema.pattern) : undefined;
  if (kind) return idFor(kind);
  const validDate = fc
    .date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true })
    .map((d) => d.toISOString());
  if (schema.format === 'date-time') {
    return fit ? validDate : fc.oneof(validDate, fc.constantFrom(...BAD_DATES));
  }
  if (schema.pattern === '^0x[0-9a-fA-F]{40}$') {
    return fc.constantFrom('0x' + '1'.repeat(40), owner.address, '0x' + 'ab'.repeat(20));
  }
  if (!fit) return hostileString;
  if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
  if (schema.format === 'email' || name.includes('email')) {
    return fc.constantFrom('fuzz@example.test', owner.email);
  }
  if (name.includes('phone')) return fc.constant('+14155550100');
  const minLength = schema.minLength ?? 0;
  return fc.string({
    minLength,
    maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 24, 24)),
  });
}

const cleanJson = fc.jsonValue({ maxDepth: 2 });

/** The free-form `params` of an action: the fields of design.md §5, each maybe hostile. */
function actionParams(fit: boolean): fc.Arbitrary<unknown> {
  const maybe = <T>(a: fc.Arbitrary<T>) =>
    fit ? a : fc.oneof({ weight: 3, arbitrary: a }, hostileJson);
  return fc.record(
    {
      template_id: maybe(idFor('template')),
      object_id: maybe(idFor('object')),
      to: maybe(fc.constant('0x' + '2'.repeat(40))),
      custom: fit ? fc.dictionary(fc.string(), cleanJson, { maxKeys: 3 }) : hostileJson,
      metadata: maybe(
        fc.record({ name: fc.string(), description: fc.string() }, { requiredKeys: [] }),
      ),
      location: maybe(
        fc.record({
          latitude: fc.double({ min: -90, max: 90, noNaN: true }),
          longitude: fc.double({ min: -180, max: 180, noNaN: true }),
        }),
      ),
    },
    { requiredKeys: [] },
  );
}

function numberFor(schema: Schema, fit: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? -2;
  const max = Math.min(schema.maximum ?? 200, min + 200);
  const inRange =
    schema.type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
  return fit ? inRange : fc.oneof(inRange, fc.constantFrom(2 ** 53, -(2 ** 63), 1e308, 0.5, -1));
}

/** A value for `schema`: with `fit`, one it accepts; else leaves are hostile now and then. */
function valueFor(schema: Schema, name: string, fit: boolean, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return fit ? cleanJson : hostileJson;
  let fitting: fc.Arbitrary<unknown>;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (schema.const !== undefined) fitting = fc.constant(schema.const);
  else if (schema.enum) fitting = fc.constantFrom(...schema.enum);
  else if (alternatives) {
    fitting = fc.oneof(...alternatives.map((s) => valueFor(s, name, fit, depth + 1)));
  } else if (
    name === 'params' &&
    type === 'object' &&
    !Object.keys(schema.properties ?? {}).length
  ) {
    fitting = actionParams(fit);
  } else {
    switch (type ?? '') {
      case 'string':
        fitting = stringFor(schema, name, fit);
        break;
      case 'integer':
      case 'number':
        fitting = numberFor(schema, fit);
        break;
      case 'boolean':
        fitting = fc.boolean();
        break;
      case 'array':
        fitting = fc.array(valueFor(schema.items ?? {}, name, fit, depth + 1), { maxLength: 3 });
        break;
      case 'object':
        fitting = objectFor(schema, fit, depth);
        break;
      default:
        fitting = fit ? cleanJson : hostileJson;
    }
  }
  return fit ? fitting : fc.oneof({ weight: 5, arbitrary: fitting }, hostileJson);
}

/** `{name, params}` of an action whose params fit its name (design.md §5). */
function fittingAction(): fc.Arbitrary<{ name: string; params: unknown }> {
  const objectId = idFor('object');
  const location = fc.record({
    latitude: fc.double({ min: -90, max: 90, noNaN: true }),
    longitude: fc.double({ min: -180, max: 180, noNaN: true }),
  });
  const custom = fc.dictionary(fc.string({ maxLength: 8 }), cleanJson, { maxKeys: 3 });
  const params: Record<string, fc.Arbitrary<unknown>> = {
    mint: fc.record(
      { template_id: idFor('template'), custom, location },
      { requiredKeys: ['template_id'] },
    ),
    transfer: fc.record({ object_id: objectId, to: fc.constant(`0x${'2'.repeat(40)}`) }),
    update: fc.record({ object_id: objectId, custom }, { requiredKeys: ['object_id'] }),
    redeem: fc.record({ object_id: objectId }),
    drop: fc.record({ object_id: objectId, location }),
    pickup: fc.record({ object_id: objectId }),
  };
  return fc
    .constantFrom(...Object.keys(params))
    .chain((name) => params[name]!.map((p) => ({ name, params: p })));
}

function objectFor(schema: Schema, fit: boolean, depth: number): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  if (fit && props.name?.anyOf && props.params) {
    return fc
      .tuple(
        objectFor({ ...schema, properties: { ...props, name: {}, params: {} } }, fit, depth),
        fittingAction(),
      )
      .map(([rest, action]) => ({ ...(rest as object), ...action }));
  }
  const model = Object.fromEntries(
    Object.entries(props).map(([k, s]) => [k, valueFor(s, k, fit, depth + 1)]),
  );
  const known = fc.record(model, {
    requiredKeys: (schema.required ?? []).filter((k) => k in props),
  });
  if (fit) return known;
  // Unknown keys, `__proto__` among them (Object.fromEntries makes it an own key).
  return fc
    .tuple(
      known,
      fc.oneof(
        { weight: 4, arbitrary: fc.constant([] as [string, unknown][]) },
        fc.array(fc.tuple(hostileString, hostileJson), { maxLength: 2 }),
      ),
    )
    .map(([k, extra]) => Object.fromEntries([...Object.entries(k), ...extra]));
}

// ---- requests --------------------------------------------------------------------------

/** Percent-encoding that also carries lone surrogates (as their 3-byte WTF-8 form). */
function encode(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) {
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const rawPercent = fc.constantFrom('%', '%zz', '%FF%FE', '%ED%A0%80', '%C0%80', '%00', '..');

function queryValue(p: Parameter): fc.Arbitrary<string> {
  if (p.name === 'next') return forgedCursor.map(encode);
  if (p.name === 'sortBy') return sortBy.map(encode);
  const v = fc
    .oneof(valueFor(p.schema ?? {}, p.name, true), valueFor(p.schema ?? {}, p.name, false))
    .map((x) => encode(typeof x === 'string' ? x : (JSON.stringify(x) ?? '')));
  return fc.oneof({ weight: 6, arbitrary: v }, rawPercent);
}

function queryFor(op: Operation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  if (params.length === 0) return fc.constant('');
  return fc
    .subarray(params, { maxLength: Math.min(4, params.length) })
    .chain((chosen) =>
      fc.tuple(
        ...chosen.map((p) =>
          fc
            .array(queryValue(p), { minLength: 1, maxLength: 2 })
            .map((vs) => vs.map((v) => `${encodeURIComponent(p.name)}=${v}`).join('&')),
        ),
      ),
    )
    .map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''));
}

function pathValue(p: Parameter): fc.Arbitrary<string> {
  const kind = p.schema?.pattern ? idKindOfPattern(p.schema.pattern) : undefined;
  return fc.oneof(
    { weight: 5, arbitrary: kind ? idFor(kind) : fc.constant('x') },
    { weight: 3, arbitrary: hostileString.map((s) => encode(s) || 'x') },
    { weight: 1, arbitrary: rawPercent },
    { weight: 1, arbitrary: fc.constant('a'.repeat(10_000)) },
  );
}

function urlFor(op: Operation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'path');
  return fc
    .tuple(fc.tuple(...params.map(pathValue)), queryFor(op))
    .map(
      ([values, query]) =>
        params.reduce((url, p, i) => url.replace(`{${p.name}}`, values[i]!), op.path) + query,
    );
}

/** JSON text; the DEEP marker becomes the nesting it stands for. */
const jsonText = (v: unknown) => JSON.stringify(v).replaceAll(JSON.stringify(DEEP), DEEP_JSON);

function bodyFor(op: Operation): fc.Arbitrary<string | undefined> {
  const broken = fc.constantFrom('', '{', '{"a":1}{', 'not json', DEEP_JSON);
  if (!op.body) {
    return fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, broken);
  }
  return fc.oneof(
    { weight: 4, arbitrary: valueFor(op.body, 'body', true).map(jsonText) },
    { weight: 6, arbitrary: valueFor(op.body, 'body', false).map(jsonText) },
    { weight: 1, arbitrary: hostileJson.map(jsonText) },
    { weight: 1, arbitrary: broken },
  );
}

/** Credentials: none, the owner's bearer token, an API key, or a broken one. */
let credentials: Record<string, string>[] = [];

function headersFor(): fc.Arbitrary<Record<string, string>> {
  return fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(owner.headers) },
        { weight: 3, arbitrary: fc.constant(key.headers) },
        fc.constantFrom(...credentials),
      ),
      fc.oneof(
        { weight: 5, arbitrary: fc.constant({}) },
        hostileString.map((s) => ({ 'user-agent': s.slice(0, 256) })),
        hostileString.map((s) => ({ 'x-request-id': s.slice(0, 256) })),
      ),
    )
    .map(([cred, extra]) => ({ ...cred, ...extra }));
}

function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(urlFor(op), bodyFor(op), headersFor()).map(([url, payload, headers]) => ({
    method: op.method,
    url,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(payload === undefined ? {} : { payload }),
  }));
}

// ---- the run ---------------------------------------------------------------------------

let svc: TestService;
let owner: TestMember;
let key: TestApiKey;
let operations: Operation[] = [];

/** Operations that end the fuzzer's own credentials or organization run last. */
function destructiveness(op: Operation): number {
  if (op.path === '/auth/logout') return 3;
  if (op.method !== 'DELETE') return 0;
  if (op.path.startsWith('/wallets/sessions') || op.path === '/organizations/{organizationId}')
    return 2;
  return 1;
}

function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}… (${s.length} chars)` : s);
  return `${r.method} ${cut(r.url)} ${JSON.stringify(r.headers)} ${cut(r.payload ?? '')}`;
}

beforeAll(async () => {
  svc = await startTestService();
  owner = await createMember(svc, { role: 'owner' });
  key = await createApiKey(svc, owner, allPermissions(), { name: 'fuzz' });
  const template = await insertTemplate(svc, owner.orgId, { isPublic: true });
  const object = await insertObject(svc, { templateId: template });
  const message = await svc.app.inject({
    method: 'POST',
    url: '/support',
    headers: owner.headers,
    payload: { title: 'fuzz', content: 'fuzz' },
  });
  realIds = {
    organization: owner.orgId,
    member: owner.memberId,
    wallet: owner.walletId,
    session: owner.sessionId,
    apiKey: key.id,
    template,
    object,
    message: message.json<{ id: string }>().id,
  };
  credentials = [
    {},
    owner.headers,
    key.headers,
    { authorization: 'Bearer not.a.jwt' },
    { 'x-api-key': 'onsk_\u0000' },
  ];
  const spec = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown }>>;
  }>();
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)
        ?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        parameters: op.parameters ?? [],
        body: body ?? null,
      });
    }
  }
  operations = operations.sort((a, b) => destructiveness(a) - destructiveness(b));
}, 60_000);

afterAll(async () => {
  await svc?.stop();
});

describe('fuzzing every operation of /openapi.json', () => {
  it('finds the operations to fuzz, path ids with their id patterns', () => {
    expect(operations.length).toBeGreaterThan(60);
    const pathParams = operations.flatMap((op) => op.parameters.filter((p) => p.in === 'path'));
    expect(pathParams.length).toBeGreaterThan(10);
  });

  it('never answers a 5xx, and every 4xx is the flat error body', async () => {
    const statuses: Record<string, number> = {};
    for (const [index, op] of operations.entries()) {
      await fc.assert(
        fc.asyncProperty(requestFor(op), async (req) => {
          const res = await svc.app.inject(req);
          const tally = `${op.method} ${op.path} ${res.statusCode}`;
          statuses[tally] = (statuses[tally] ?? 0) + 1;
          const where = `${describeRequest(req)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, where).toBeLessThan(500);
          if (res.statusCode >= 400) {
            let body: { code?: unknown; message?: unknown } = {};
            try {
              body = JSON.parse(res.body) as typeof body;
            } catch {
              expect.fail(`not JSON: ${where}`);
            }
            expect(Number.isInteger(body.code), where).toBe(true);
            expect(typeof body.message, where).toBe('string');
          }
        }),
        { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
      );
    }
    if (process.env.FUZZ_STATS) console.log(statuses);
    const ready = await svc.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
  }, 600_000);
});
