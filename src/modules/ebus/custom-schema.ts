import { Compile } from 'typebox/compile';
import type { TemplateInfo } from './types.js';

type Checker = ReturnType<typeof Compile>;
const compiled = new Map<string, { source: string; checker: Checker | null }>();

/**
 * Checks an object's `custom` against its template's `custom_schema` (a JSON Schema);
 * returns the first reason it fails, or null. Compiled schemas are cached per template and
 * recompiled when the schema changes. A minimal stand-in until the objects feature's
 * validator is folded in.
 */
export function checkCustom(
  template: TemplateInfo,
  custom: Record<string, unknown>,
): string | null {
  if (!template.custom_schema) return null;
  const source = JSON.stringify(template.custom_schema);
  let hit = compiled.get(template.id);
  if (!hit || hit.source !== source) {
    let checker: Checker | null;
    try {
      checker = Compile(template.custom_schema as Parameters<typeof Compile>[0]);
    } catch {
      checker = null;
    }
    hit = { source, checker };
    if (compiled.size > 1000) compiled.clear();
    compiled.set(template.id, hit);
  }
  if (!hit.checker) return "the template's custom_schema cannot be compiled";
  if (hit.checker.Check(custom)) return null;
  const first = hit.checker.Errors(custom)[0];
  return first ? `${first.instancePath || '/'} ${first.message}` : 'is invalid';
}
