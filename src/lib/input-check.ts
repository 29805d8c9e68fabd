import { isWellFormed } from './canonical-json.js';
import type { FieldIssue } from './errors.js';

/**
 * Text and shape rules that hold for every input, whatever its schema: PostgreSQL refuses
 * a NUL character in text, RFC 8785 (the signed action text) has no encoding for a lone
 * surrogate, and recursive code (canonical JSON, JSON.stringify) overflows the stack on
 * deep nesting. Checking once at the edge keeps every route and every free-form field safe.
 */

/**
 * Deepest nesting of objects and arrays a request body may have: a bound for the stack's
 * sake. Free-form fields have their own, tighter bound where they are read (an object's
 * `custom` and a template's `custom_schema`: 32 levels, naming the field), which this leaves
 * room for under the envelope (a batch item's `custom` starts five levels down).
 */
export const MAX_INPUT_DEPTH = 64;

// ES2024's String.prototype.toWellFormed (Node 20): each lone surrogate becomes U+FFFD.
const wellFormed = (s: string) => (s as unknown as { toWellFormed(): string }).toWellFormed();

/** `s` with each lone surrogate replaced by U+FFFD: text any JSON reader takes as it is. */
export function toWellFormed(s: string): string {
  return isWellFormed(s) ? s : wellFormed(s);
}

/**
 * At most `max` UTF-16 units of `s`, one fewer rather than the first half of a surrogate pair:
 * a cut through a pair would leave a lone surrogate, which PostgreSQL stores as U+FFFD and a
 * strict JSON reader refuses.
 */
export function cutText(s: string, max: number): string {
  const cut = s.slice(0, max);
  const last = cut.charCodeAt(cut.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
}

/** True when `s` has no NUL character and no lone surrogate. */
export function isCleanText(s: string): boolean {
  return !s.includes('\0') && isWellFormed(s);
}

function textReason(s: string): string {
  return s.includes('\0') ? 'contains a NUL character' : 'contains a lone surrogate';
}

/**
 * JSON objects and arrays, and the query and params objects (whose prototype has a null
 * prototype); never Buffers or streams.
 */
function isContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null;
}

interface Frame {
  value: Record<string, unknown> | unknown[];
  depth: number;
  parent: Frame | null;
  key: string;
}

const MAX_SEGMENT = 64;
const UNSAFE_CHARS = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const MAX_FIELD = 256;

/** The dotted field name of `key` under `frame`, made safe and short enough to echo. */
function fieldOf(frame: Frame | null, key: string, prefix: string): string {
  const keys = [key];
  for (let f = frame; f && f.parent; f = f.parent) keys.push(f.key);
  const field = [prefix, ...keys.reverse()]
    .filter(Boolean)
    .map((k) => (k.length > MAX_SEGMENT ? `${k.slice(0, MAX_SEGMENT)}…` : k))
    .join('.');
  const short = field.length > MAX_FIELD ? `${field.slice(0, MAX_FIELD)}…` : field;
  // Cutting may split a surrogate pair; the name is echoed, so it must be clean itself.
  return short.replace(UNSAFE_CHARS, '\uFFFD');
}

/**
 * The first string value or key of `value` that is not clean text, or the first container
 * nested deeper than `maxDepth`, as a field issue (field names dotted from `prefix`). An
 * iterative walk, so hostile nesting cannot overflow the stack here either.
 */
export function findInputIssue(
  value: unknown,
  prefix = '',
  maxDepth = MAX_INPUT_DEPTH,
): FieldIssue | null {
  if (typeof value === 'string') {
    return isCleanText(value) ? null : { field: prefix, reason: textReason(value) };
  }
  if (!isContainer(value)) return null;
  const stack: Frame[] = [{ value, depth: 1, parent: null, key: '' }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    if (frame.depth > maxDepth) {
      return {
        field: fieldOf(frame.parent, frame.key, prefix) || prefix || 'body',
        reason: `is nested deeper than ${maxDepth} levels`,
      };
    }
    const node = frame.value;
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const count = keys ? keys.length : (node as unknown[]).length;
    for (let i = 0; i < count; i++) {
      const key = keys ? keys[i]! : String(i);
      if (keys && !isCleanText(key)) {
        return { field: fieldOf(frame, key, prefix), reason: `key ${textReason(key)}` };
      }
      const child = keys ? (node as Record<string, unknown>)[key] : (node as unknown[])[i];
      if (typeof child === 'string') {
        if (!isCleanText(child))
          return { field: fieldOf(frame, key, prefix), reason: textReason(child) };
      } else if (isContainer(child)) {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      }
    }
  }
  return null;
}
