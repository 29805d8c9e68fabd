import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { canonicalJson } from '../../lib/canonical-json.js';
import { invalid, type FieldIssue } from '../../lib/errors.js';
import { nestsDeeperThan } from '../../lib/json-depth.js';
import { compilePattern, type SafePattern } from './pattern.js';
import { exceedsValidationBudget, MAX_VALIDATION_STEPS } from './schema-cost.js';
import { inspectCustomSchema } from './schema-rules.js';

// ajv-formats is CommonJS; under NodeNext its plugin is the namespace's `default`.
const addFormats = addFormatsModule.default;

/** A template's schema for `custom` is bounded so compiling and applying it stay cheap. */
export const MAX_CUSTOM_SCHEMA_BYTES = 16 * 1024;
/** How deep a `custom_schema` may nest (JSON levels, as for `custom` itself). */
export const MAX_CUSTOM_SCHEMA_DEPTH = 32;
const CACHE_SIZE = 1000;

// ajv-formats' formats but `url`, whose expression takes quadratic time (schema-rules.ts).
const FORMATS = [
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
] as const;

/**
 * A new Ajv for one compile. Ajv keeps every regular expression it compiled for as long as
 * the instance lives (removeSchema does not drop them), so a shared instance grew with each
 * distinct pattern ever saved, refused or not; compiles are cached per template (below), so
 * a new instance each (about 5 ms to set up, most of it compiling the draft-07 meta-schema)
 * is rare.
 *
 * `patterns` are those inspectCustomSchema compiled for this schema: the `code.regExp` hook
 * (the linear-time engine, pattern.ts) uses them rather than compile them a second time. A
 * `$ref` names only subschemas the inspection walked, so Ajv meets no other pattern; one it
 * did would be compiled and added, so the cost walk knows it too.
 *
 * Strict: unknown keywords and formats fail to compile instead of being ignored, so a
 * typo in a schema is refused when the template is saved, not discovered on mint.
 * addUsedSchema: false keeps the schema's `$id` out of the instance's store.
 * inlineRefs: 8 inlines only small referenced subschemas, so a subschema referenced from
 * hundreds of places does not make hundreds of copies of its code. optimize: false: Ajv's
 * code optimizer made compiling about 3× slower and worse than linear in the schema's
 * size, while validating 500 records took about the same (5–7 µs) with or without it.
 */
function newAjv(patterns: Map<string, SafePattern>): Ajv {
  const regExp = Object.assign(
    (source: string) => {
      let p = patterns.get(source);
      if (!p) {
        p = compilePattern(source);
        patterns.set(source, p);
      }
      return p;
    },
    { code: 'linearRegExp' },
  );
  const ajv = new Ajv({
    strict: true,
    allErrors: true,
    addUsedSchema: false,
    inlineRefs: 8,
    code: { regExp, optimize: false },
  });
  addFormats(ajv, { formats: [...FORMATS], keywords: true });
  return ajv;
}

/** A compiled custom_schema: Ajv's validator and what the cost walk needs. */
export interface CompiledSchema {
  validate: ValidateFunction;
  schema: Record<string, unknown>;
  patterns: Map<string, SafePattern>;
}

const refuse = (reason: string, fields: FieldIssue[]) =>
  invalid(`invalid ${fields[0]?.field ?? 'custom_schema'}: ${reason}`, fields);

/**
 * Checks a `custom_schema` against the limits (docs/objects.md) and compiles it; throws
 * 400 code 3 naming the field (`custom_schema` or `custom_schema.<path>`) when refused.
 * The cheap checks run first: depth before anything recursive, size before compiling.
 */
export function compileCustomSchema(schema: Record<string, unknown>): CompiledSchema {
  const whole = (reason: string) => refuse(reason, [{ field: 'custom_schema', reason }]);
  if (nestsDeeperThan(schema, MAX_CUSTOM_SCHEMA_DEPTH)) {
    throw whole(`nests deeper than ${MAX_CUSTOM_SCHEMA_DEPTH} levels`);
  }
  let bytes: number;
  try {
    bytes = Buffer.byteLength(canonicalJson(schema));
  } catch {
    throw whole('is not valid JSON');
  }
  if (bytes > MAX_CUSTOM_SCHEMA_BYTES) {
    throw whole(`is larger than ${MAX_CUSTOM_SCHEMA_BYTES} bytes`);
  }
  const { issues, patterns } = inspectCustomSchema(schema);
  if (issues.length > 0) throw refuse(issues[0]!.reason, issues);
  let validate: ValidateFunction;
  try {
    validate = newAjv(patterns).compile(schema);
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 300) : 'does not compile';
    throw whole(`is not a valid JSON Schema: ${reason}`);
  }
  if ((validate as { $async?: unknown }).$async) {
    throw whole('is not a valid JSON Schema: asynchronous schemas are not supported');
  }
  return { validate, schema, patterns };
}

/** Refuses (400 code 3, naming the field) a `custom_schema` outside the limits. */
export function checkCustomSchema(schema: Record<string, unknown>): void {
  compileCustomSchema(schema);
}

/** What validateCustom needs of a template. */
export interface CustomSchemaOwner {
  id: string;
  custom_schema: Record<string, unknown> | null;
  updated_at: Date;
}

export type CustomCheck = { ok: true } | { ok: false; fields: FieldIssue[] };

// A schema that stopped being accepted (saved before a limit existed) is cached as its
// refusal, so each mint does not compile it again only to refuse it again.
const cache = new Map<string, CompiledSchema | Error>();

function compiledFor(template: CustomSchemaOwner & { custom_schema: Record<string, unknown> }) {
  const key = `${template.id}:${template.updated_at.getTime()}`;
  let entry = cache.get(key);
  if (!entry) {
    try {
      entry = compileCustomSchema(template.custom_schema);
    } catch (err) {
      entry = err instanceof Error ? err : new Error('custom_schema does not compile');
    }
    if (cache.size >= CACHE_SIZE) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(key, entry);
  }
  if (entry instanceof Error) throw entry;
  return entry;
}

/**
 * Validates an object's `custom` against its template's schema (on mint and update). The
 * caller has bounded `custom` (size and depth, ebus checkParams). Compiled validators are
 * cached by template id + updated_at, so a changed template compiles once and an unchanged
 * one never again. Throws when the template's schema itself is not accepted.
 */
export function validateCustom(template: CustomSchemaOwner, custom: unknown): CustomCheck {
  if (!template.custom_schema) return { ok: true };
  const { validate, schema, patterns } = compiledFor({
    ...template,
    custom_schema: template.custom_schema,
  });
  if (exceedsValidationBudget(schema, custom, patterns)) {
    const reason = `is too costly to check against the template's custom_schema (more than ${MAX_VALIDATION_STEPS} steps); send less data`;
    return { ok: false, fields: [{ field: 'custom', reason }] };
  }
  if (validate(custom)) return { ok: true };
  const fields = (validate.errors ?? []).map((e) => {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const field = ['custom', path, missing].filter(Boolean).join('.');
    return { field, reason: e.message ?? 'is invalid' };
  });
  return { ok: false, fields };
}
