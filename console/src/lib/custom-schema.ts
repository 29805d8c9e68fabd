/**
 * What the console can tell of a template's `custom_schema` as it is typed, before the
 * service (which compiles it and answers 400 code 3 when it cannot) is asked: it must be
 * empty (no schema) or a JSON object, and an object's `type` must be "object".
 */
export type SchemaCheck =
  { ok: true; value: Record<string, unknown> | null } | { ok: false; message: string };

export function checkCustomSchema(text: string): SchemaCheck {
  if (text.trim() === '') return { ok: true, value: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `Not JSON: ${(err as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, message: 'A schema is a JSON object, e.g. {"type": "object"}.' };
  }
  const type = (parsed as { type?: unknown }).type;
  if (type !== undefined && type !== 'object') {
    return { ok: false, message: '`custom` is an object: the schema’s "type" must be "object".' };
  }
  return { ok: true, value: parsed as Record<string, unknown> };
}
