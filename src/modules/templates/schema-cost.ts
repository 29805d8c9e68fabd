import type { SafePattern } from './pattern.js';
import { resolveRef, type SchemaNode } from './schema-rules.js';

/**
 * How much work checking one `custom` against a schema can take, counted before Ajv runs.
 *
 * Size limits alone do not bound it: a 16 KiB schema whose `items` has a thousand-branch
 * `anyOf`, applied to a 16 KiB array of eight thousand numbers, makes Ajv build millions
 * of error objects (seconds of CPU); `$ref`s can repeat a subschema exponentially. So the
 * walk below follows the schema over the data as Ajv would, counting each keyword it would
 * apply to each value, and stops as soon as the count passes the budget. It takes every
 * branch of `anyOf`/`oneOf`/`if` (an upper bound), and runs on an explicit stack, so a
 * `$ref` loop that never moves into the data simply exhausts the budget.
 */

/** Steps one check may take; one step is at most about a microsecond of Ajv's work. */
export const MAX_VALIDATION_STEPS = 50_000;

/** Characters × program instructions one step pays for in a pattern test. */
const PATTERN_WORK_PER_STEP = 8;
/** Characters one step pays for in a format check (ajv-formats' expressions). */
const FORMAT_CHARS_PER_STEP = 64;
/** Items² one step pays for in `uniqueItems` (Ajv compares every pair of items). */
const SQUARED_ITEMS_PER_STEP = 32;

type SchemaObject = Record<string, unknown>;

/** What the walk needs of one subschema, worked out once per compiled schema. */
interface Plan {
  /** Steps of its own keywords on any value (arrays count their length: enum, required). */
  base: number;
  /** Subschemas applied to the same value: allOf, anyOf, oneOf, not, if/then/else, $ref. */
  same: SchemaNode[];
  pattern: SafePattern | undefined;
  format: boolean;
  uniqueItems: boolean;
  items: SchemaNode | undefined;
  tuple: SchemaNode[] | undefined;
  additionalItems: SchemaNode | undefined;
  contains: SchemaNode | undefined;
  properties: SchemaObject | undefined;
  patternProperties: [SafePattern, SchemaNode][];
  additionalProperties: SchemaNode | undefined;
  propertyNames: SchemaNode | undefined;
  dependencies: SchemaObject | undefined;
  /** A `$ref` that leads nowhere or a pattern that did not compile: refuse, do not guess. */
  broken: boolean;
}

const isObject = (v: unknown): v is SchemaObject =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const asSchema = (v: unknown): SchemaNode | undefined =>
  typeof v === 'boolean' || isObject(v) ? v : undefined;

function makePlan(root: SchemaNode, node: SchemaObject, patterns: Map<string, SafePattern>): Plan {
  let base = 1;
  for (const v of Object.values(node)) base += Array.isArray(v) ? 1 + v.length : 1;
  let broken = false;
  const same: SchemaNode[] = [];
  if (typeof node.$ref === 'string') {
    const target = resolveRef(root, node.$ref);
    if (target === undefined) broken = true;
    else same.push(target);
  }
  for (const k of ['allOf', 'anyOf', 'oneOf']) {
    const list = node[k];
    if (Array.isArray(list))
      for (const s of list) if (asSchema(s) !== undefined) same.push(s as SchemaNode);
  }
  for (const k of ['not', 'if', 'then', 'else']) {
    const s = asSchema(node[k]);
    if (s !== undefined) same.push(s);
  }
  const compiled = (source: string) => {
    const p = patterns.get(source);
    if (!p) broken = true;
    return p;
  };
  const pattern = typeof node.pattern === 'string' ? compiled(node.pattern) : undefined;
  const patternProperties: [SafePattern, SchemaNode][] = [];
  if (isObject(node.patternProperties)) {
    for (const [source, s] of Object.entries(node.patternProperties)) {
      const p = compiled(source);
      const sub = asSchema(s);
      if (p && sub !== undefined) patternProperties.push([p, sub]);
    }
  }
  return {
    base,
    same,
    pattern,
    format: node.format !== undefined,
    uniqueItems: node.uniqueItems === true,
    items: asSchema(node.items),
    tuple: Array.isArray(node.items) ? (node.items as SchemaNode[]) : undefined,
    additionalItems: asSchema(node.additionalItems),
    contains: asSchema(node.contains),
    properties: isObject(node.properties) ? node.properties : undefined,
    patternProperties,
    additionalProperties: asSchema(node.additionalProperties),
    propertyNames: asSchema(node.propertyNames),
    dependencies: isObject(node.dependencies) ? node.dependencies : undefined,
    broken,
  };
}

// Subschemas of cached compiled schemas live as long as the cache keeps them.
const plans = new WeakMap<SchemaObject, Plan>();

function planOf(root: SchemaNode, node: SchemaObject, patterns: Map<string, SafePattern>): Plan {
  let plan = plans.get(node);
  if (!plan) {
    plan = makePlan(root, node, patterns);
    plans.set(node, plan);
  }
  return plan;
}

const patternSteps = (p: SafePattern, length: number) =>
  Math.ceil((p.programSize * (length + 1)) / PATTERN_WORK_PER_STEP);

/**
 * The steps checking `data` against `root` can take, counted until they pass `budget`
 * (then some number above it; Infinity when the schema has a broken reference). `patterns`
 * holds the schema's compiled patterns (inspectCustomSchema); the only patterns run here
 * are `patternProperties` keys against property names, each paid for before it runs.
 */
export function validationSteps(
  root: SchemaNode,
  data: unknown,
  patterns: Map<string, SafePattern>,
  budget = MAX_VALIDATION_STEPS,
): number {
  let steps = 0;
  const nodes: SchemaNode[] = [root];
  const values: unknown[] = [data];
  // Each application of a subschema to a value costs a step when it is queued.
  const apply = (s: SchemaNode | undefined, v: unknown) => {
    if (s === undefined) return;
    steps += 1;
    nodes.push(s);
    values.push(v);
  };
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const d = values.pop();
    if (typeof node === 'boolean') continue;
    const p = planOf(root, node, patterns);
    if (p.broken) return Infinity;
    steps += p.base;
    if (typeof d === 'string') {
      if (p.pattern) steps += patternSteps(p.pattern, d.length);
      if (p.format) steps += Math.ceil(d.length / FORMAT_CHARS_PER_STEP);
    }
    if (p.uniqueItems && Array.isArray(d)) {
      steps += Math.ceil((d.length * d.length) / SQUARED_ITEMS_PER_STEP);
    }
    if (steps > budget) return steps;

    for (const s of p.same) apply(s, d);
    if (Array.isArray(d)) {
      for (let i = 0; i < d.length; i++) {
        if (p.tuple) apply(i < p.tuple.length ? p.tuple[i] : p.additionalItems, d[i]);
        else apply(p.items, d[i]);
        apply(p.contains, d[i]);
      }
    } else if (isObject(d)) {
      for (const [key, v] of Object.entries(d)) {
        apply(p.propertyNames, key);
        const dep = p.dependencies?.[key];
        if (dep !== undefined && Object.hasOwn(p.dependencies!, key)) apply(asSchema(dep), d);
        let matched = false;
        if (p.properties && Object.hasOwn(p.properties, key)) {
          matched = true;
          apply(asSchema(p.properties[key]), v);
        }
        for (const [pattern, s] of p.patternProperties) {
          steps += patternSteps(pattern, key.length);
          if (steps > budget) return steps;
          if (pattern.test(key)) {
            matched = true;
            apply(s, v);
          }
        }
        if (!matched) apply(p.additionalProperties, v);
      }
    }
    if (steps > budget) return steps;
  }
  return steps;
}

/** Whether checking `data` against `root` could take more than `budget` steps. */
export function exceedsValidationBudget(
  root: SchemaNode,
  data: unknown,
  patterns: Map<string, SafePattern>,
  budget = MAX_VALIDATION_STEPS,
): boolean {
  return validationSteps(root, data, patterns, budget) > budget;
}
