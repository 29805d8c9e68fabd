import { describe, expect, it } from 'vitest';
import { MAX_VALIDATION_STEPS, exceedsValidationBudget, validationSteps } from './schema-cost.js';
import { inspectCustomSchema, type SchemaNode } from './schema-rules.js';

const steps = (schema: Record<string, unknown>, data: unknown, budget?: number) =>
  validationSteps(schema, data, inspectCustomSchema(schema).patterns, budget);
const exceeds = (schema: Record<string, unknown>, data: unknown) =>
  exceedsValidationBudget(schema, data, inspectCustomSchema(schema).patterns);
const fill = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

describe('validationSteps', () => {
  it('keeps an ordinary schema and object far under the budget', () => {
    const schema = {
      type: 'object',
      properties: {
        seat: { type: 'string', pattern: '^[A-Z][0-9]{1,3}$' },
        tags: { type: 'array', items: { type: 'string', maxLength: 16 } },
      },
    };
    const n = steps(schema, { seat: 'B12', tags: ['a', 'b'] });
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(100);
  });

  it('counts a subschema once per value it applies to', () => {
    const schema = { type: 'array', items: { type: 'number', minimum: 0 } };
    expect(
      steps(
        schema,
        fill(200, () => 1),
      ),
    ).toBeGreaterThan(
      steps(
        schema,
        fill(100, () => 1),
      ),
    );
    expect(
      steps(
        schema,
        fill(200, () => 1),
      ) -
        steps(
          schema,
          fill(100, () => 1),
        ),
    ).toBe(
      steps(
        schema,
        fill(300, () => 1),
      ) -
        steps(
          schema,
          fill(200, () => 1),
        ),
    );
  });

  it('refuses a wide anyOf applied to every item of a large array', () => {
    const schema = {
      type: 'array',
      items: { type: 'number', anyOf: fill(250, () => ({ maximum: 0 })) },
    };
    expect(
      exceeds(
        schema,
        fill(8000, () => 1),
      ),
    ).toBe(true);
    expect(
      exceeds(
        schema,
        fill(10, () => 1),
      ),
    ).toBe(false);
  });

  it('stops counting a $ref loop that never moves into the data once it passes the budget', () => {
    const schema = {
      definitions: { a: { anyOf: [{ $ref: '#/definitions/a' }] } },
      $ref: '#/definitions/a',
    };
    const n = steps(schema, 1);
    expect(n).toBeGreaterThan(MAX_VALIDATION_STEPS);
    expect(n).toBeLessThan(MAX_VALIDATION_STEPS + 100);
  });

  it('refuses $refs that repeat a subschema exponentially', () => {
    const definitions = Object.fromEntries(
      fill(30, (i) => [
        `d${i}`,
        i === 29
          ? { type: 'number' }
          : { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] },
      ]),
    );
    expect(exceeds({ definitions, $ref: '#/definitions/d20' }, 1)).toBe(false);
    expect(exceeds({ definitions, $ref: '#/definitions/d0' }, 1)).toBe(true);
  });

  it('charges a pattern by its program size times the length of the string', () => {
    const schema = { type: 'string', pattern: '(?:a|b)*a(?:a|b){64}d' };
    expect(exceeds(schema, 'ab'.repeat(1000))).toBe(false);
    expect(exceeds(schema, 'ab'.repeat(8000))).toBe(true);
    expect(exceeds({ type: 'string', pattern: '^a' }, 'ab'.repeat(8000))).toBe(false);
  });

  it('charges uniqueItems for every pair of items', () => {
    const schema = { type: 'array', uniqueItems: true };
    expect(
      exceeds(
        schema,
        fill(500, (i) => [i]),
      ),
    ).toBe(false);
    expect(
      exceeds(
        schema,
        fill(3000, (i) => [i]),
      ),
    ).toBe(true);
  });

  it('follows patternProperties only into the properties whose names match', () => {
    const schema = {
      type: 'object',
      patternProperties: { '^x': { type: 'array', items: { type: 'number', minimum: 0 } } },
    };
    const big = fill(5000, () => 1);
    expect(exceeds(schema, { y: big })).toBe(false);
    expect(steps(schema, { x: big })).toBeGreaterThan(steps(schema, { y: big }) + 5000);
  });

  it('refuses, rather than guesses, a schema whose $ref leads nowhere', () => {
    const schema: SchemaNode = { $ref: '#/definitions/missing' };
    expect(validationSteps(schema, 1, new Map())).toBe(Infinity);
  });
});
