/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization.
 *
 * Object keys are sorted by UTF-16 code units, numbers use the ECMAScript shortest
 * round-trip form, and no insignificant whitespace is emitted. Properties whose value is
 * `undefined`, a function or a symbol are dropped, and such array elements become `null`,
 * as JSON.stringify would; values with a `toJSON` method (Dates) are encoded through it.
 *
 * Throws a plain Error for anything that has no JSON form: `undefined`, functions or
 * symbols at the top level, NaN/Infinity, BigInt, lone surrogates and cycles.
 *
 * Written out here rather than taken from a package: every action hashes several objects
 * (docs/ebus.md, "The text to sign"), so this runs on the hot path; strings and numbers go through
 * V8's own JSON.stringify, which already writes them the RFC's way (RFC 8785 §3.2.2).
 */
export function canonicalJson(value: unknown): string {
  const out = encode(value, []);
  if (out === undefined) {
    throw new Error(`canonicalJson: cannot encode a value of type ${typeof value}`);
  }
  return out;
}

const fail = (why: string): never => {
  throw new Error(`canonicalJson: cannot encode value: ${why}`);
};

/** No lone surrogate: a string JSON can carry as it is (ES2024 `isWellFormed`). */
export const isWellFormed = (s: string): boolean =>
  (s as unknown as { isWellFormed(): boolean }).isWellFormed();

function encodeString(s: string): string {
  if (!isWellFormed(s)) {
    fail('lone surrogate is not allowed');
  }
  return JSON.stringify(s);
}

/** The encoding of `v`, or undefined for a value JSON leaves out (undefined, function, symbol). */
function encode(v: unknown, path: object[]): string | undefined {
  switch (typeof v) {
    case 'string':
      return encodeString(v);
    case 'number':
      return Number.isFinite(v) ? String(v) : fail(`${v} is not allowed`);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return fail('BigInt is not allowed');
    case 'object':
      return v === null ? 'null' : encodeObject(v, path);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
}

function encodeObject(o: object, path: object[]): string | undefined {
  if (path.includes(o)) fail('circular reference');
  path.push(o);
  let out: string | undefined;
  const toJSON = (o as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    out = encode((toJSON as () => unknown).call(o), path);
  } else if (Array.isArray(o)) {
    out = '[';
    for (let i = 0; i < o.length; i++) {
      if (i > 0) out += ',';
      out += encode(o[i], path) ?? 'null';
    }
    out += ']';
  } else {
    const rec = o as Record<string, unknown>;
    const keys = Object.keys(rec).sort();
    out = '{';
    let first = true;
    for (const k of keys) {
      const e = encode(rec[k], path);
      if (e === undefined) continue;
      out += `${first ? '' : ','}${encodeString(k)}:${e}`;
      first = false;
    }
    out += '}';
  }
  path.pop();
  return out;
}
