import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('reproduces the RFC 8785 section 3.2.2 example byte for byte', () => {
    // The RFC's input text, parsed as any JSON client would (333333333.33333329 and 1E30
    // are not representable literally, which is the point of the example).
    const input: unknown = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units at every depth, regardless of insertion order', () => {
    const a = canonicalJson({ b: 1, a: { z: [3, { y: 1, x: 2 }], é: 0, Z: 0 }, '10': 0, '9': 0 });
    expect(a).toBe('{"10":0,"9":0,"a":{"Z":0,"z":[3,{"x":2,"y":1}],"é":0},"b":1}');
    expect(canonicalJson({ '\u{1f600}': 1, '\ufb33': 2 })).toBe('{"\u{1f600}":1,"\ufb33":2}');
  });

  it('emits no whitespace and drops properties whose value is undefined', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1], c: ' x ' })).toBe(
      '{"b":[null,1],"c":" x "}',
    );
  });

  it('formats numbers the ECMAScript way: integers without fraction, -0 as 0, large as exponent', () => {
    expect(canonicalJson([1.0, -0, 1e21, 1e-7, 100, 0.1 + 0.2])).toBe(
      '[1,0,1e+21,1e-7,100,0.30000000000000004]',
    );
  });

  it('encodes a Date through toJSON as its ISO string', () => {
    expect(canonicalJson({ t: new Date('2026-01-02T03:04:05.006Z') })).toBe(
      '{"t":"2026-01-02T03:04:05.006Z"}',
    );
  });

  it('throws a plain Error for values JSON cannot represent', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [undefined, () => 1, Symbol('s'), NaN, Infinity, 10n, cyclic, '\ud800']) {
      expect(() => canonicalJson(bad), String(typeof bad)).toThrow(Error);
    }
    expect(() => canonicalJson(undefined)).toThrow(/cannot encode/);
  });
});

describe('canonicalJson against the canonicalize package', () => {
  // A reference implementation of RFC 8785, kept as a dev dependency for this comparison.
  it('writes the same bytes for a thousand random JSON values', async () => {
    const { default: reference } = await import('canonicalize');
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const chars = ['a', 'Z', '1', 'é', '€', '\u{1f600}', '"', '\\', '\n', '\u0001', '\ufb33', ' '];
    const str = () =>
      Array.from(
        { length: Math.floor(rand() * 6) },
        () => chars[Math.floor(rand() * chars.length)],
      ).join('');
    const num = () =>
      [0, -0, 1, -1.5, 1e21, 1e-7, 333333333.3333333, 2 ** 53, rand() * 1e6, -rand()][
        Math.floor(rand() * 10)
      ]!;
    const value = (depth: number): unknown => {
      const k = Math.floor(rand() * (depth > 3 ? 4 : 6));
      if (k === 0) return str();
      if (k === 1) return num();
      if (k === 2) return [null, true, false][Math.floor(rand() * 3)];
      if (k === 3) return depth > 3 ? null : new Date(Math.floor(rand() * 2e12));
      if (k === 4) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(rand() * 5) }, () => [str(), value(depth + 1)]),
      );
    };
    for (let i = 0; i < 1000; i++) {
      const v = value(0);
      expect(canonicalJson(v)).toBe(reference(v));
    }
  });
});
