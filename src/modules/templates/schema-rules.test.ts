import { describe, expect, it } from 'vitest';
import { MAX_PATTERN_PROGRAM } from './pattern.js';
import {
  inspectCustomSchema,
  MAX_ENUM_VALUES,
  MAX_SUBSCHEMAS,
  resolveRef,
} from './schema-rules.js';

const fields = (schema: Record<string, unknown>) =>
  inspectCustomSchema(schema).issues.map((i) => i.field);

describe('inspectCustomSchema', () => {
  it('accepts an ordinary schema and compiles each of its patterns once', () => {
    const r = inspectCustomSchema({
      type: 'object',
      properties: { a: { type: 'string', pattern: '^x' }, b: { type: 'string', pattern: '^x' } },
      patternProperties: { '^n_': { type: 'number' } },
      definitions: { c: { type: 'string', pattern: '\\d' } },
      $ref: '#/definitions/c',
    });
    expect(r.issues).toEqual([]);
    expect([...r.patterns.keys()].sort()).toEqual(['\\d', '^n_', '^x']);
  });

  it('names the path of each pattern the linear-time engine refuses', () => {
    const r = inspectCustomSchema({
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+\\1$' } },
      patternProperties: { '^(?=a)': true },
      items: [{ anyOf: [{ pattern: '(?<=x)y' }] }],
    });
    expect(r.issues).toEqual(
      expect.arrayContaining([
        { field: 'custom_schema.properties.s.pattern', reason: 'backreferences are not supported' },
        { field: 'custom_schema.patternProperties.^(?=a)', reason: 'lookahead is not supported' },
        { field: 'custom_schema.items.0.anyOf.0.pattern', reason: 'lookbehind is not supported' },
      ]),
    );
  });

  it('refuses references outside the schema, nested $id, the url format, huge enums and too many subschemas', () => {
    expect(fields({ properties: { a: { $ref: 'https://example.com/s.json' } } })).toEqual([
      'custom_schema.properties.a.$ref',
    ]);
    expect(fields({ $ref: '#/definitions/none' })).toEqual(['custom_schema.$ref']);
    expect(fields({ $id: 'https://x.test/s', properties: { a: { $id: 'inner' } } })).toEqual([
      'custom_schema.properties.a.$id',
    ]);
    expect(fields({ properties: { u: { type: 'string', format: 'url' } } })).toEqual([
      'custom_schema.properties.u.format',
    ]);
    expect(fields({ enum: Array.from({ length: MAX_ENUM_VALUES + 1 }, (_, i) => i) })).toEqual([
      'custom_schema.enum',
    ]);
    const wide = { anyOf: Array.from({ length: MAX_SUBSCHEMAS }, () => ({})) };
    expect(fields(wide)).toEqual(['custom_schema']);
    expect(fields({ anyOf: wide.anyOf.slice(1) })).toEqual([]);
  });

  it('refuses patterns that are too large together', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 12 }, (_, i) => [
        `p${i}`,
        { type: 'string', pattern: `[a-z]{${980 + i}}` },
      ]),
    );
    expect(inspectCustomSchema({ properties }).issues).toEqual([
      { field: 'custom_schema', reason: expect.stringMatching(/patterns are too large together/) },
    ]);
  });
});

/** `count` distinct patternProperties keys of about 1,000 instructions each (`\\S{999}`, …). */
const largePatterns = (count: number): Record<string, true> => {
  const atoms = ['\\S', '.', '\\w', '\\d', '[a-z]'];
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`${atoms[i % 5]}{${999 - Math.floor(i / 5)}}`, true]),
  );
};

describe('inspectCustomSchema on a schema it refuses for its size', () => {
  it('stops at the subschema cap before compiling any pattern of a wide node', () => {
    const r = inspectCustomSchema({ type: 'object', patternProperties: largePatterns(1000) });
    expect(r.patterns.size).toBe(0);
    expect(r.issues).toEqual([
      { field: 'custom_schema', reason: `has more than ${MAX_SUBSCHEMAS} subschemas` },
    ]);
  });

  it('stops compiling once the patterns pass the total cap', () => {
    const r = inspectCustomSchema({ type: 'object', patternProperties: largePatterns(250) });
    // About 1,000 instructions each: the eleventh passes 10,000.
    expect(r.patterns.size).toBeLessThanOrEqual(11);
    expect(r.issues).toEqual([
      {
        field: 'custom_schema',
        reason: `its patterns are too large together (more than ${MAX_PATTERN_PROGRAM} instructions)`,
      },
    ]);
  });
});

describe('inspectCustomSchema on $ref', () => {
  const sub = { type: 'string', pattern: '^x' };
  const root = (ref: string) => ({
    type: 'object',
    $defs: { x: sub },
    definitions: { 'a/b': sub },
    properties: { a: sub, e: { type: 'string', enum: [sub] } },
    items: [sub],
    examples: [sub],
    default: sub,
    const: sub,
    enum: [sub],
    allOf: [{ $ref: ref }],
  });

  it.each([
    '#/examples/0',
    '#/default',
    '#/const',
    '#/enum/0',
    '#/properties/e/enum/0',
    '#/definitions',
    '#/properties',
    '#/$defs',
  ])('refuses %s: it does not name a subschema the rules walked', (ref) => {
    expect(inspectCustomSchema(root(ref)).issues).toEqual([
      {
        field: 'custom_schema.allOf.0.$ref',
        reason: 'must be a reference inside this schema (# or #/…) to a subschema',
      },
    ]);
  });

  it.each(['#', '#/$defs/x', '#/definitions/a~1b', '#/properties/a', '#/items/0', '#/allOf/0'])(
    'accepts %s',
    (ref) => {
      expect(inspectCustomSchema(root(ref)).issues).toEqual([]);
    },
  );
});

describe('resolveRef', () => {
  it('follows # and JSON pointers, with ~0, ~1 and percent escapes', () => {
    const root = { definitions: { 'a/b': { type: 'string' }, 'c~d': true, 'e f': false } };
    expect(resolveRef(root, '#')).toBe(root);
    expect(resolveRef(root, '#/definitions/a~1b')).toEqual({ type: 'string' });
    expect(resolveRef(root, '#/definitions/c~0d')).toBe(true);
    expect(resolveRef(root, '#/definitions/e%20f')).toBe(false);
    expect(resolveRef(root, '#/definitions/none')).toBeUndefined();
    expect(resolveRef(root, '#/definitions/%E0%A4%A')).toBeUndefined();
    expect(resolveRef(root, 'other.json#/definitions')).toBeUndefined();
  });
});
