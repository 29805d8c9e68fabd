import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { invalid, type FieldIssue } from '../../lib/errors.js';

// ajv-formats is CommonJS; under NodeNext its plugin is the namespace's `default`.
const addFormats = addFormatsModule.default;

/** A template's schema for `custom` is bounded so compiling it stays cheap. */
export const MAX_CUSTOM_SCHEMA_BYTES = 16 * 1024;
const CACHE_SIZE = 1000;

// Strict: unknown keywords and formats fail to compile instead of being ignored, so a
// typo in a schema is refused when the template is saved, not discovered on mint.
// addUsedSchema: false keeps templates' `$id`s from colliding in the shared instance.
const ajv = new Ajv({ strict: true, allErrors: true, addUsedSchema: false });
addFormats(ajv);

const cache = new Map<string, ValidateFunction>();

function compile(schema: Record<string, unknown>): ValidateFunction {
  const validate = ajv.compile(schema);
  if ((validate as { $async?: unknown }).$async)
    throw new Error('asynchronous schemas are not supported');
  return validate;
}

/** Refuses (400 code 3) a `custom_schema` that is too large or does not compile. */
export function checkCustomSchema(schema: Record<string, unknown>): void {
  if (JSON.stringify(schema).length > MAX_CUSTOM_SCHEMA_BYTES) {
    throw invalid(`custom_schema is larger than ${MAX_CUSTOM_SCHEMA_BYTES} bytes`, [
      { field: 'custom_schema', reason: 'is too large' },
    ]);
  }
  try {
    compile(schema);
  } catch (err) {
    const reason = err instanceof Error ? err.message.slice(0, 300) : 'does not compile';
    throw invalid(`custom_schema is not a valid JSON Schema: ${reason}`, [
      { field: 'custom_schema', reason },
    ]);
  }
}

/** What validateCustom needs of a template. */
export interface CustomSchemaOwner {
  id: string;
  custom_schema: Record<string, unknown> | null;
  updated_at: Date;
}

export type CustomCheck = { ok: true } | { ok: false; fields: FieldIssue[] };

/**
 * Validates an object's `custom` against its template's schema (on mint and update).
 * Compiled validators are cached by template id + updated_at, so a changed template
 * compiles once and an unchanged one never again.
 */
export function validateCustom(template: CustomSchemaOwner, custom: unknown): CustomCheck {
  if (!template.custom_schema) return { ok: true };
  const key = `${template.id}:${template.updated_at.getTime()}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = compile(template.custom_schema);
    if (cache.size >= CACHE_SIZE) {
      const oldest = cache.keys().next().value;
      if (oldest !== undefined) cache.delete(oldest);
    }
    cache.set(key, validate);
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
