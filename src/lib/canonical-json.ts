import canonicalize from 'canonicalize';

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialization.
 *
 * Object keys are sorted by UTF-16 code units, numbers use the ECMAScript shortest
 * round-trip form, and no insignificant whitespace is emitted. Properties whose value is
 * `undefined` (or a function/symbol) are dropped, as JSON.stringify would.
 *
 * Throws a plain Error for anything that has no JSON form: `undefined`, functions or
 * symbols at the top level, NaN/Infinity, BigInt, lone surrogates and cycles.
 */
export function canonicalJson(value: unknown): string {
  let out: string | undefined;
  try {
    out = canonicalize(value);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`canonicalJson: cannot encode value: ${message}`, { cause: err });
  }
  if (typeof out !== 'string') {
    throw new Error(`canonicalJson: cannot encode a value of type ${typeof value}`);
  }
  return out;
}
