/**
 * The cost of checking an object's `custom` against hostile template schemas (issue 14):
 * for each case, the steps the cost walk counts (src/modules/templates/schema-cost.ts),
 * whether the budget refuses it, the compile time and Ajv's validation time, and the
 * microseconds per step — the figure MAX_VALIDATION_STEPS is calibrated from.
 *
 *   npx tsx bench/custom-schema.ts
 *
 * Every schema is at most MAX_CUSTOM_SCHEMA_BYTES and every `custom` at most 16 KiB, the
 * service's limits. Runs in-process, no service and no database.
 */
import { performance } from 'node:perf_hooks';
import {
  compileCustomSchema,
  MAX_CUSTOM_SCHEMA_BYTES,
  type CompiledSchema,
} from '../src/modules/templates/custom-schema.js';
import { MAX_VALIDATION_STEPS, validationSteps } from '../src/modules/templates/schema-cost.js';

interface Case {
  name: string;
  schema: Record<string, unknown>;
  data: unknown;
  /** Warm-up data when `data` itself would leave a cache behind (a pattern's DFA states). */
  warm?: unknown;
}

// A fixed pseudo-random a/b string: no period for the DFA to settle into.
function ab(n: number, seed = 12345): string {
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += x & 1024 ? 'a' : 'b';
  }
  return s;
}
const fill = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

const cases: Case[] = [
  {
    name: 'ticket (ordinary schema and data)',
    schema: {
      type: 'object',
      required: ['seat', 'row'],
      properties: {
        seat: { type: 'string', pattern: '^[A-Z][0-9]{1,3}$' },
        row: { type: 'integer', minimum: 1, maximum: 200 },
        holder: { type: 'string', maxLength: 200 },
        email: { type: 'string', format: 'email' },
        tags: { type: 'array', items: { type: 'string', maxLength: 32 }, maxItems: 20 },
      },
      additionalProperties: false,
    },
    data: { seat: 'B12', row: 7, holder: 'Ada', email: 'ada@example.com', tags: ['vip', 'early'] },
  },
  {
    name: 'array of 500 records, 6 keywords each',
    schema: {
      type: 'object',
      properties: {
        rows: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              n: { type: 'integer', minimum: 0 },
              s: { type: 'string', pattern: '^[a-z]+$' },
            },
          },
        },
      },
    },
    data: { rows: fill(500, (i) => ({ n: i, s: 'abc' })) },
  },
  {
    name: 'items.anyOf of 250 failing branches x 8000 numbers',
    schema: { type: 'array', items: { type: 'number', anyOf: fill(250, () => ({ maximum: 0 })) } },
    data: fill(8000, () => 1),
  },
  {
    name: 'items.anyOf of 250 failing branches x 48 numbers (near the budget)',
    schema: { type: 'array', items: { type: 'number', anyOf: fill(250, () => ({ maximum: 0 })) } },
    data: fill(48, () => 1),
  },
  {
    name: 'items.oneOf of 120 failing objects x 100 objects',
    schema: {
      type: 'array',
      items: {
        type: 'object',
        oneOf: fill(120, (i) => ({ properties: { [`k${i}`]: true }, required: [`k${i}`] })),
      },
    },
    data: fill(100, () => ({ a: 1 })),
  },
  {
    name: 'items.allOf of 250 passing branches x 8000 numbers',
    schema: { type: 'array', items: { type: 'number', allOf: fill(250, () => ({ minimum: 0 })) } },
    data: fill(8000, () => 1),
  },
  {
    name: 'pattern (?:a|b)*a(?:a|b){64}d on one 16,000-char string',
    schema: {
      type: 'object',
      properties: { s: { type: 'string', pattern: '(?:a|b)*a(?:a|b){64}d' } },
    },
    data: { s: ab(16_000) + 'd' },
    warm: { s: ab(16_000, 1) + 'd' },
  },
  {
    name: 'pattern (?:a|b)*a(?:a|b){64}d on one 5,500-char string (near the budget)',
    schema: {
      type: 'object',
      properties: { s: { type: 'string', pattern: '(?:a|b)*a(?:a|b){64}d' } },
    },
    data: { s: ab(5_500) + 'd' },
    warm: { s: ab(5_500, 1) + 'd' },
  },
  {
    name: 'pattern (?:a|b)*a(?:a|b){20}d on one 1,000-char string',
    schema: {
      type: 'object',
      properties: { s: { type: 'string', pattern: '(?:a|b)*a(?:a|b){20}d' } },
    },
    data: { s: ab(1000) + 'd' },
  },
  {
    name: '60 patterns of 40 instructions, allOf, on one 16,000-char string',
    schema: {
      type: 'string',
      allOf: fill(60, (i) => ({ pattern: `(?:a|b)*a(?:a|b){${30 + (i % 5)}}d` })),
    },
    data: ab(16_000) + 'd',
  },
  {
    name: 'patternProperties: 100 patterns x 1500 keys',
    schema: {
      type: 'object',
      patternProperties: Object.fromEntries(
        fill(100, (i) => [`^k${i}x[ab]*$`, { type: 'integer' }]),
      ),
    },
    data: Object.fromEntries(fill(1500, (i) => [`k${i % 100}x${ab(3)}`, i])),
  },
  {
    name: 'items.anyOf of 300 failing branches (over the subschema cap)',
    schema: { type: 'array', items: { type: 'number', anyOf: fill(300, () => ({ maximum: 0 })) } },
    data: [1],
  },
  {
    name: 'uniqueItems over 1250 distinct arrays (near the budget)',
    schema: { type: 'array', uniqueItems: true },
    data: fill(1250, (i) => [i]),
  },
  {
    name: 'uniqueItems over 3000 distinct arrays',
    schema: { type: 'array', uniqueItems: true },
    data: fill(3000, (i) => [i]),
  },
  {
    name: 'enum of 512 numbers x 8000 items',
    schema: { type: 'array', items: { enum: fill(512, (i) => i + 10_000) } },
    data: fill(8000, () => 1),
  },
  {
    name: '$ref chain doubling 24 times',
    schema: {
      definitions: Object.fromEntries(
        fill(24, (i) => [
          `d${i}`,
          i === 23
            ? { type: 'number' }
            : { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] },
        ]),
      ),
      $ref: '#/definitions/d0',
    },
    data: 1,
  },
  {
    name: 'recursive $ref that never moves into the data',
    schema: {
      definitions: { a: { anyOf: [{ $ref: '#/definitions/a' }] } },
      $ref: '#/definitions/a',
    },
    data: 1,
  },
  {
    name: 'format date-time and email on 8 strings of 2,000 chars',
    schema: {
      type: 'array',
      items: {
        type: 'string',
        anyOf: [{ format: 'date-time' }, { format: 'email' }, { format: 'uri' }],
      },
    },
    data: fill(8, () => '1'.repeat(1990) + '@a.b'),
  },
];

const ms = (t0: number) => (performance.now() - t0).toFixed(1);
console.log(`budget ${MAX_VALIDATION_STEPS} steps\n`);
for (const c of cases) {
  const bytes = JSON.stringify(c.schema).length;
  if (bytes > MAX_CUSTOM_SCHEMA_BYTES) console.log(`(schema of ${bytes} bytes is over the cap)`);
  let t0 = performance.now();
  let compiled: CompiledSchema;
  try {
    compiled = compileCustomSchema(c.schema);
  } catch (err) {
    console.log(`${c.name}\n  refused on save in ${ms(t0)} ms: ${(err as Error).message}`);
    continue;
  }
  const compileMs = ms(t0);
  t0 = performance.now();
  const steps = validationSteps(
    compiled.schema,
    c.data,
    compiled.patterns,
    20 * MAX_VALIDATION_STEPS,
  );
  const countMs = ms(t0);
  let validateMs = 'not run (over 20× the budget)';
  let perStep = '';
  if (steps <= 20 * MAX_VALIDATION_STEPS) {
    compiled.validate(c.warm ?? c.data);
    t0 = performance.now();
    compiled.validate(c.data);
    const dt = performance.now() - t0;
    validateMs = `${dt.toFixed(1)} ms`;
    perStep = `, ${((dt * 1000) / steps).toFixed(3)} µs/step`;
  }
  const verdict = steps > MAX_VALIDATION_STEPS ? 'REFUSED' : 'checked';
  console.log(
    `${c.name}\n  ${verdict}: ${steps === Infinity ? '∞' : steps} steps (counted in ${countMs} ms), compile ${compileMs} ms, validate ${validateMs}${perStep}`,
  );
}
