import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import {
  compilePattern,
  MAX_PATTERN_PROGRAM,
  translatePattern,
  UnsupportedPattern,
} from './pattern.js';

/** Median time of `runs` calls, so one garbage-collection pause does not decide. */
function medianMs(f: () => void, runs = 5): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

describe('compilePattern', () => {
  it.each([
    ['^(a+)+$', 'a'.repeat(10_000) + '!', false],
    ['^(a+)+$', 'a'.repeat(10_000), true],
    ['(a|a)*', 'a'.repeat(10_000) + '!', true],
    ['^(a|a)*$', 'a'.repeat(10_000) + '!', false],
    ['(a*)*b', 'a'.repeat(10_000), false],
    ['(a*)*b', 'a'.repeat(10_000) + 'b', true],
  ])(
    'matches the catastrophic pattern %s on 10,000 characters in linear time',
    (p, s, expected) => {
      const re = compilePattern(p);
      re.test('aaa!');
      let result: boolean | undefined;
      const ms = medianMs(() => (result = re.test(s)));
      expect(result).toBe(expected);
      // Linear: a few milliseconds on an idle machine. The bound is loose so a busy machine
      // does not fail it; V8's backtracking engine would not finish on these inputs at all.
      expect(ms).toBeLessThan(500);
    },
  );

  it.each([
    ['^(a+)+\\1$', 'backreferences'],
    ['(a)\\1', 'backreferences'],
    ['(?<x>a)\\k<x>', 'backreferences'],
    ['a(?=b)', 'lookahead'],
    ['a(?!b)', 'lookahead'],
    ['(?<=a)b', 'lookbehind'],
    ['(?<!a)b', 'lookbehind'],
  ])('refuses %s: %s cannot run in linear time', (p, what) => {
    expect(() => compilePattern(p)).toThrow(UnsupportedPattern);
    expect(() => compilePattern(p)).toThrow(what);
  });

  it('refuses what is not an ECMAScript pattern, and what RE2 cannot express, with a reason', () => {
    expect(() => compilePattern('(a')).toThrow(/not a valid regular expression/);
    expect(() => compilePattern('a{')).toThrow(/not a valid regular expression/);
    expect(() => compilePattern('a{1001}')).toThrow(/not supported: .*repeat count/);
    expect(() => compilePattern('\\p{Letter}')).toThrow(/not supported/);
  });

  it('refuses a pattern whose program would pass the limit before RE2 compiles it', () => {
    expect(() => compilePattern('x{1000}'.repeat(11))).toThrow(/too large/);
    expect(() => compilePattern('(?:[a-z]{1000}){11}')).toThrow(/too large/);
    expect(compilePattern('[a-z]{1000}').programSize).toBeLessThanOrEqual(MAX_PATTERN_PROGRAM);
  });

  it('means what the ECMAScript pattern means, including \\s, \\S, dot, [^] and astral characters', () => {
    const patterns = [
      '^[a-z]+$',
      '\\s',
      '^\\S+$',
      '[^\\s]',
      '[^\\S]',
      '[\\S]',
      '^.$',
      '[^]',
      '[]',
      '^\\d{3}-\\d{4}$',
      '\\bfoo\\b',
      '(?<year>\\d{4})-(?<m>\\d\\d)',
      '\\u00e9',
      '\\u{1F600}',
      '\\uD83D\\uDE00',
      '^😀$',
      '^[😀-😂]$',
      '\\p{L}+',
      '\\cJ',
      '\\0',
      '[\\b]',
      '\\x41',
      '\\/',
      '[a\\-z]',
      '[\\]]',
      '[[:a]',
      'a{2,3}',
      '(a|b)*?c',
      '^$',
      '\\t\\n\\v\\f\\r',
      '[.]',
    ];
    const inputs = [
      '',
      'a',
      'abc',
      ' ',
      '\u00a0',
      '\u2028',
      '\n',
      '\r',
      '\v',
      '\ufeff',
      '\u3000',
      'é',
      '😀',
      '😁',
      '123-4567',
      'foo bar',
      '2020-01',
      '\u0000',
      '\b',
      'A',
      '/',
      '-',
      ']',
      '[',
      ':',
      'aaa',
      'abbc',
      '\t\n\v\f\r',
      '.',
      '\u180e',
    ];
    for (const p of patterns) {
      const ours = compilePattern(p);
      const v8 = new RegExp(p, 'u');
      for (const s of inputs) expect(ours.test(s), `${p} on ${JSON.stringify(s)}`).toBe(v8.test(s));
    }
  });

  it('gives each pattern its own key for Ajv', () => {
    expect(String(compilePattern('^a$'))).not.toBe(String(compilePattern('^b$')));
  });
});

describe('translatePattern', () => {
  it("keeps ECMAScript's meaning of dot and \\s in RE2 syntax and renames named groups", () => {
    const { re2 } = translatePattern('(?<n>.)\\s');
    expect(re2.startsWith('(?P<n>[^\\n\\r\\x{2028}\\x{2029}])[')).toBe(true);
  });
});
