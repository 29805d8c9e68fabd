import { RE2JS, RE2JSException } from 're2js';

/**
 * Regular expressions from users (a template's `pattern` and `patternProperties`) run on
 * RE2JS, a linear-time engine, never on V8's backtracking one: `^(a+)+$` against 30 `a`s
 * and a `!` takes V8 minutes and RE2JS microseconds.
 *
 * A pattern is read as JSON Schema says, as an ECMAScript regular expression with the `u`
 * flag, and translated to RE2 syntax with the same meaning (`.`, `\s` and `\S` keep
 * ECMAScript's line terminators and white space). What RE2 cannot run in linear time is
 * refused when the template is saved: backreferences, lookahead and lookbehind, counted
 * repetitions over 1000, Unicode property names RE2 does not know (`\p{L}` and `\p{Greek}`
 * work, `\p{Letter}` and `\p{Script=Greek}` do not).
 */

/** Largest compiled program accepted (RE2 instructions, about one per character or class). */
export const MAX_PATTERN_PROGRAM = 10_000;

export class UnsupportedPattern extends Error {}

export interface SafePattern {
  /** Unanchored search, as JSON Schema's `pattern` is. */
  test(s: string): boolean;
  /** Size of the compiled program: matching costs at most about this much per character. */
  readonly programSize: number;
  /** Ajv keys the compiled patterns of a schema by this. */
  toString(): string;
}

// ECMAScript's \s: WhiteSpace and LineTerminator (ECMA-262 §22.2.2.9), and its complement.
const JS_SPACE =
  '\\x{9}-\\x{D}\\x{20}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}' +
  '\\x{205F}\\x{3000}\\x{FEFF}';
const JS_NON_SPACE =
  '\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}' +
  '\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}' +
  '\\x{3001}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}';
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
const ANY = '\\x{0}-\\x{10FFFF}';

const hex = (cp: number) => `\\x{${cp.toString(16).toUpperCase()}}`;
const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

/**
 * A group while translating: `alts` sums the finished alternatives, `seq` the current one,
 * `last` the size of the atom a quantifier would repeat. Sizes are an upper bound of RE2's
 * program size, known before RE2 compiles (which costs time in proportion to that size).
 */
interface Frame {
  alts: number;
  seq: number;
  last: number;
}

/** `\u{…}`, `\uXXXX` or a `\uXXXX\uXXXX` surrogate pair at `i`: its code point and length. */
function unicodeEscape(src: string, i: number): [number, number] {
  if (src[i + 2] === '{') {
    const end = src.indexOf('}', i + 3);
    return [parseInt(src.slice(i + 3, end), 16), end + 1 - i];
  }
  const unit = parseInt(src.slice(i + 2, i + 6), 16);
  if (isHigh(unit) && src.startsWith('\\u', i + 6)) {
    const low = parseInt(src.slice(i + 8, i + 12), 16);
    if (isLow(low)) return [(unit - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000, 12];
  }
  return [unit, 6];
}

/**
 * The escape at `i` in RE2 syntax and its length. The source already compiled as an
 * ECMAScript `u` pattern, so every escape here is one that syntax allows.
 */
function escape(src: string, i: number, inClass: boolean): [string, number] {
  const c = src[i + 1]!;
  switch (c) {
    case 'k':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      throw new UnsupportedPattern('backreferences are not supported');
    case 's':
      return [inClass ? JS_SPACE : `[${JS_SPACE}]`, 2];
    case 'S':
      return [inClass ? JS_NON_SPACE : `[${JS_NON_SPACE}]`, 2];
    case 'u': {
      const [cp, len] = unicodeEscape(src, i);
      return [hex(cp), len];
    }
    case 'c':
      return [hex(src.charCodeAt(i + 2) % 32), 3];
    case '0':
      return [hex(0), 2];
    case 'b':
      return [inClass ? hex(8) : '\\b', 2];
    case 'p':
    case 'P':
      return [src.slice(i, src.indexOf('}', i) + 1), src.indexOf('}', i) + 1 - i];
    case 'x':
      return [src.slice(i, i + 4), 4];
    default:
      // \d \D \w \W \B \f \n \r \t \v and escaped syntax characters mean the same in RE2.
      return [`\\${c}`, 2];
  }
}

/** `{n}`, `{n,}` or `{n,m}` at `i`: how many copies RE2 makes, and the quantifier's length. */
function countedRepeat(src: string, i: number): [number, number] {
  const end = src.indexOf('}', i);
  const [min, max] = src.slice(i + 1, end).split(',');
  const n = Number(min);
  const copies = max === undefined ? n : max === '' ? n + 1 : Number(max);
  return [Math.max(copies, 1), end + 1 - i];
}

/**
 * The RE2 form of an ECMAScript (`u` flag) pattern that is known to compile, and an upper
 * bound of its program size. Throws UnsupportedPattern for what RE2 does not run.
 */
export function translatePattern(src: string): { re2: string; size: number } {
  let out = '';
  const stack: Frame[] = [{ alts: 0, seq: 0, last: 0 }];
  let top = stack[0]!;
  const atom = (text: string, size = 1) => {
    out += text;
    top.seq += size;
    top.last = size;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      const [text, len] = escape(src, i, false);
      atom(text);
      i += len;
    } else if (c === '[') {
      if (src.startsWith('[]', i) || src.startsWith('[^]', i)) {
        // [] matches nothing and [^] anything; RE2 would read `]` there as a literal.
        const empty = src[i + 1] === ']';
        atom(empty ? `[^${ANY}]` : `[${ANY}]`);
        i += empty ? 2 : 3;
        continue;
      }
      let cls = '[';
      i += 1;
      while (src[i] !== ']') {
        if (src[i] === '\\') {
          const [text, len] = escape(src, i, true);
          cls += text;
          i += len;
        } else {
          // A bare `[` inside a class would start a POSIX class (`[:alpha:]`) in RE2.
          cls += src[i] === '[' ? '\\[' : src[i];
          i += 1;
        }
      }
      atom(`${cls}]`);
      i += 1;
    } else if (c === '.') {
      atom(JS_DOT);
      i += 1;
    } else if (c === '(') {
      if (src.startsWith('(?=', i) || src.startsWith('(?!', i)) {
        throw new UnsupportedPattern('lookahead is not supported');
      }
      if (src.startsWith('(?<=', i) || src.startsWith('(?<!', i)) {
        throw new UnsupportedPattern('lookbehind is not supported');
      }
      if (src.startsWith('(?<', i)) {
        out += '(?P<';
        i += 3;
      } else if (src.startsWith('(?:', i)) {
        out += '(?:';
        i += 3;
      } else {
        out += '(';
        i += 1;
      }
      top = { alts: 0, seq: 0, last: 0 };
      stack.push(top);
    } else if (c === ')') {
      const group = stack.pop()!;
      top = stack[stack.length - 1]!;
      atom(')', group.alts + group.seq + 2);
      i += 1;
    } else if (c === '|') {
      out += '|';
      top.alts += top.seq + 1;
      top.seq = 0;
      i += 1;
    } else if (c === '{') {
      const [copies, len] = countedRepeat(src, i);
      out += src.slice(i, i + len);
      top.seq += top.last * (copies - 1) + copies;
      top.last *= copies;
      i += len;
    } else if (c === '*' || c === '+' || c === '?') {
      out += c;
      top.seq += 2;
      i += 1;
    } else {
      // A literal (a surrogate pair stays two units; RE2JS reads it as one code point).
      atom(c);
      i += 1;
    }
    if (top.alts + top.seq > MAX_PATTERN_PROGRAM) {
      throw new UnsupportedPattern(`is too large (more than ${MAX_PATTERN_PROGRAM} instructions)`);
    }
  }
  return { re2: out, size: top.alts + top.seq };
}

/**
 * Compiles a user's pattern for linear-time matching, or throws UnsupportedPattern with a
 * reason fit for a 400 (no internal detail beyond the engine's parse message).
 */
export function compilePattern(source: string): SafePattern {
  try {
    new RegExp(source, 'u');
  } catch (err) {
    const why =
      err instanceof Error ? err.message.replace(/^Invalid regular expression: /, '') : '';
    throw new UnsupportedPattern(`is not a valid regular expression: ${why.slice(0, 200)}`);
  }
  const { re2 } = translatePattern(source);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(re2);
  } catch (err) {
    if (!(err instanceof RE2JSException)) throw err;
    throw new UnsupportedPattern(`is not supported: ${err.message.slice(0, 200)}`);
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PATTERN_PROGRAM) {
    throw new UnsupportedPattern(`is too large (more than ${MAX_PATTERN_PROGRAM} instructions)`);
  }
  return {
    test: (s) => compiled.test(s),
    programSize,
    toString: () => `/${source}/u`,
  };
}
