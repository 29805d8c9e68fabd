/**
 * RFC 8785 (JSON Canonicalization Scheme): object keys sorted by UTF-16 code units, numbers
 * in the ECMAScript shortest round-trip form, no whitespace. What JSON.stringify leaves out
 * (`undefined`, functions, symbols) is left out of objects and is `null` in arrays; a value
 * with `toJSON` (a Date) is written through it. Throws for what JSON cannot carry: NaN,
 * Infinity, BigInt, lone surrogates, cycles, and `undefined` at the top.
 */
export function canonicalJson(value: unknown): string {
  const out = write(value, []);
  if (out === undefined) throw new Error(`canonicalJson: no JSON form for ${typeof value}`);
  return out;
}

function fail(why: string): never {
  throw new Error(`canonicalJson: ${why}`);
}

function writeString(s: string): string {
  // String.prototype.isWellFormed (ES2024; Node ≥ 20 and current browsers).
  if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    fail('a lone surrogate has no JSON form');
  }
  // V8's JSON.stringify escapes strings exactly as RFC 8785 §3.2.2.2 asks.
  return JSON.stringify(s);
}

function write(v: unknown, seen: object[]): string | undefined {
  switch (typeof v) {
    case 'string':
      return writeString(v);
    case 'number':
      // ECMAScript Number.prototype.toString is the RFC's number form (§3.2.2.3).
      return Number.isFinite(v) ? String(v) : fail(`${v} has no JSON form`);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return fail('a BigInt has no JSON form; send it as a string');
    case 'object':
      return v === null ? 'null' : writeObject(v, seen);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
}

function writeObject(o: object, seen: object[]): string | undefined {
  if (seen.includes(o)) fail('a cycle has no JSON form');
  seen.push(o);
  let out: string | undefined;
  const toJSON = (o as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    out = write((toJSON as () => unknown).call(o), seen);
  } else if (Array.isArray(o)) {
    out = `[${o.map((item: unknown) => write(item, seen) ?? 'null').join(',')}]`;
  } else {
    const rec = o as Record<string, unknown>;
    const parts: string[] = [];
    // Array.prototype.sort compares UTF-16 code units, as RFC 8785 §3.2.3 asks.
    for (const key of Object.keys(rec).sort()) {
      const e = write(rec[key], seen);
      if (e !== undefined) parts.push(`${writeString(key)}:${e}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.pop();
  return out;
}
