import type { FieldIssue } from '../../lib/errors.js';
import {
  compilePattern,
  MAX_PATTERN_PROGRAM,
  UnsupportedPattern,
  type SafePattern,
} from './pattern.js';

/**
 * What a `custom_schema` may contain beyond compiling under Ajv (draft-07, strict). Each
 * rule keeps the cost of checking an object's `custom` bounded and predictable; the cost
 * itself is counted per object in schema-cost.ts.
 */

/** Keywords whose value is one subschema. */
const ONE = [
  'not',
  'if',
  'then',
  'else',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
];
/** Keywords whose value is an array of subschemas. */
const MANY = ['allOf', 'anyOf', 'oneOf'];
/** Keywords whose value maps names to subschemas. */
const MAP = ['properties', 'patternProperties', 'definitions', '$defs'];

export type SchemaNode = Record<string, unknown> | boolean;

const isSchema = (v: unknown): v is SchemaNode =>
  typeof v === 'boolean' || (v !== null && typeof v === 'object' && !Array.isArray(v));

/** The subschemas directly under `node`, with the path of each (draft-07's applicators). */
export function subschemas(node: Record<string, unknown>): [string[], SchemaNode][] {
  const out: [string[], SchemaNode][] = [];
  for (const k of ONE) {
    if (isSchema(node[k])) out.push([[k], node[k]]);
  }
  for (const k of MANY) {
    const list = node[k];
    if (Array.isArray(list)) list.forEach((s, i) => isSchema(s) && out.push([[k, String(i)], s]));
  }
  const items = node.items;
  if (isSchema(items)) out.push([['items'], items]);
  if (Array.isArray(items))
    items.forEach((s, i) => isSchema(s) && out.push([['items', String(i)], s]));
  for (const k of [...MAP, 'dependencies']) {
    const map = node[k];
    if (!isSchema(map) || typeof map === 'boolean') continue;
    // dependencies also holds arrays of property names, which are not schemas.
    for (const [name, s] of Object.entries(map)) if (isSchema(s)) out.push([[k, name], s]);
  }
  return out;
}

/** The keys of a `$ref` that is `#` or a JSON pointer into the same document; else undefined. */
function refPath(ref: string): string[] | undefined {
  if (ref === '#') return [];
  if (!ref.startsWith('#/')) return undefined;
  try {
    return ref
      .slice(2)
      .split('/')
      .map((raw) => decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return undefined;
  }
}

/**
 * The subschema a `$ref` names: only `#` and JSON pointers into the same document
 * (`#/definitions/x`). Undefined when the reference is of another kind or leads nowhere.
 */
export function resolveRef(root: SchemaNode, ref: string): SchemaNode | undefined {
  const keys = refPath(ref);
  if (!keys) return undefined;
  let node: unknown = root;
  for (const key of keys) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return isSchema(node) ? node : undefined;
}

export interface SchemaInspection {
  issues: FieldIssue[];
  /** Every pattern of the schema, compiled for the linear-time engine. */
  patterns: Map<string, SafePattern>;
}

/**
 * Subschemas one schema may have. Ajv's compile time grows with them (tens of ms for 500
 * on this project's 2-core machine), and it runs on save and on the first mint after a
 * change or a restart, inside the event loop.
 */
export const MAX_SUBSCHEMAS = 256;
/** Values one `enum` may list: Ajv's meta-schema compares every pair when compiling. */
export const MAX_ENUM_VALUES = 512;

const MAX_ISSUES = 20;

/**
 * Checks the rules every subschema must follow and compiles its patterns. Issues name the
 * field as `custom_schema.<path>` (e.g. `custom_schema.properties.code.pattern`).
 *
 * A schema past the subschema or pattern-size cap is refused as soon as the walk sees it
 * (with that issue alone): subschemas are counted when their parent is reached, before any
 * of them is looked at, and patterns stop being compiled once their total passes the cap,
 * so a refused schema costs little whatever its size.
 */
export function inspectCustomSchema(root: SchemaNode): SchemaInspection {
  const issues: FieldIssue[] = [];
  const patterns = new Map<string, SafePattern>();
  let programTotal = 0;
  const issue = (path: string[], reason: string) => {
    if (issues.length < MAX_ISSUES)
      issues.push({ field: ['custom_schema', ...path].join('.'), reason });
  };
  const stop = (reason: string): SchemaInspection => ({
    issues: [{ field: 'custom_schema', reason }],
    patterns,
  });
  /** Compiles one pattern; false once the patterns' total is over the cap. */
  const pattern = (source: string, path: string[]) => {
    if (patterns.has(source)) return true;
    try {
      const p = compilePattern(source);
      patterns.set(source, p);
      programTotal += p.programSize;
    } catch (err) {
      if (!(err instanceof UnsupportedPattern)) throw err;
      issue(path, err.message);
    }
    return programTotal <= MAX_PATTERN_PROGRAM;
  };
  const tooLarge = () =>
    stop(`its patterns are too large together (more than ${MAX_PATTERN_PROGRAM} instructions)`);
  // The subschemas walked (their paths, as JSON): the only places a `$ref` may lead to.
  // Ajv compiles whatever a `$ref` names, so one into an `examples`, `default`, `const` or
  // `enum` value would compile what these rules never saw.
  const walked = new Set<string>();
  const refs: [string[], string][] = [];
  const stack: [string[], SchemaNode][] = [[[], root]];
  let count = 1;
  while (stack.length > 0) {
    const [path, node] = stack.pop()!;
    walked.add(JSON.stringify(path));
    if (typeof node === 'boolean') continue;
    const children = subschemas(node);
    count += children.length;
    if (count > MAX_SUBSCHEMAS) return stop(`has more than ${MAX_SUBSCHEMAS} subschemas`);
    if (Array.isArray(node.enum) && node.enum.length > MAX_ENUM_VALUES) {
      issue([...path, 'enum'], `lists more than ${MAX_ENUM_VALUES} values`);
    }
    if (path.length > 0 && node.$id !== undefined) {
      issue([...path, '$id'], '$id is allowed only at the top of the schema');
    }
    if (typeof node.$ref === 'string') refs.push([path, node.$ref]);
    if (typeof node.pattern === 'string' && !pattern(node.pattern, [...path, 'pattern'])) {
      return tooLarge();
    }
    const pp = node.patternProperties;
    if (isSchema(pp) && typeof pp !== 'boolean') {
      for (const key of Object.keys(pp)) {
        if (!pattern(key, [...path, 'patternProperties', key])) return tooLarge();
      }
    }
    if (node.format === 'url') {
      // ajv-formats' url expression backtracks in quadratic time on long strings.
      issue([...path, 'format'], 'format "url" is not supported; use "uri"');
    }
    for (const [sub, child] of children) stack.push([[...path, ...sub], child]);
  }
  for (const [path, ref] of refs) {
    const target = refPath(ref);
    if (!target || !walked.has(JSON.stringify(target))) {
      issue([...path, '$ref'], 'must be a reference inside this schema (# or #/…) to a subschema');
    }
  }
  return { issues, patterns };
}
