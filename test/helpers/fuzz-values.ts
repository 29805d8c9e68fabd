import fc from 'fast-check';
import { idKindOfPattern, newId, type IdKind } from '../../src/lib/ids.js';

/**
 * Hostile values for test/service/fuzz.test.ts, and values shaped by a JSON Schema: `fit` ones the
 * schema accepts (so handlers run) and others whose leaves are hostile now and then.
 */

export type Schema = {
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

/** Stands for 20,000 nested arrays: spliced into the JSON text after stringifying. */
export const DEEP = '\u0001deep\u0001';
export const DEEP_JSON = '['.repeat(20_000) + ']'.repeat(20_000);
const MEGABYTE = 'x'.repeat(1024 * 1024);

export const BAD_DATES = [
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

export const hostileString: fc.Arbitrary<string> = fc.oneof(
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
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
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

export const forgedCursor: fc.Arbitrary<string> = fc.oneof(
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

export const sortBy = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'when_created', 'name'),
  hostileString,
);

export const cleanJson = fc.jsonValue({ maxDepth: 2 });

/** What the fuzzer knows of its organization: real ids by kind, an address, an email. */
export interface FuzzContext {
  ids: Partial<Record<IdKind, string>>;
  address: string;
  email: string;
}

/** Values shaped by a schema, using the real ids of `ctx` so handlers get past lookups. */
export function schemaValues(ctx: FuzzContext) {
  function idFor(kind: IdKind): fc.Arbitrary<string> {
    const real = ctx.ids[kind];
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
      return fc.constantFrom('0x' + '1'.repeat(40), ctx.address, '0x' + 'ab'.repeat(20));
    }
    if (!fit) return hostileString;
    if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
    if (schema.format === 'email' || name.includes('email')) {
      return fc.constantFrom('fuzz@example.test', ctx.email);
    }
    if (name.includes('phone')) return fc.constant('+14155550100');
    const minLength = schema.minLength ?? 0;
    return fc.string({
      minLength,
      maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 24, 24)),
    });
  }

  /** The free-form `params` of an action: the fields of docs/ebus.md, each maybe hostile. */
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

  /** `{name, params}` of an action whose params fit its name (docs/ebus.md). */
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

  return { idFor, valueFor };
}
