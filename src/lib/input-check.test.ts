import { describe, expect, it } from 'vitest';
import {
  cutText,
  findInputIssue,
  isCleanText,
  MAX_INPUT_DEPTH,
  toWellFormed,
} from './input-check.js';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('isCleanText', () => {
  it('accepts any well-formed text and refuses NUL and lone surrogates', () => {
    expect(isCleanText('plain, émoji 😀, 中文')).toBe(true);
    expect(isCleanText('a\u0000b')).toBe(false);
    expect(isCleanText('a\ud800b')).toBe(false);
    expect(isCleanText('\udc00')).toBe(false);
  });
});

describe('cutText and toWellFormed', () => {
  it('cuts at most max units, one fewer rather than half a surrogate pair', () => {
    expect(cutText('abcdef', 3)).toBe('abc');
    expect(cutText('ab', 3)).toBe('ab');
    expect(cutText('ab😀c', 3)).toBe('ab');
    expect(cutText('ab😀c', 4)).toBe('ab😀');
    expect(cutText('😀😀', 3)).toBe('😀');
  });

  it('replaces each lone surrogate with U+FFFD and leaves well-formed text as it is', () => {
    expect(toWellFormed('a\ud83d')).toBe('a\uFFFD');
    expect(toWellFormed('\udc00b\ud800')).toBe('\uFFFDb\uFFFD');
    const text = 'plain 😀';
    expect(toWellFormed(text)).toBe(text);
  });
});

describe('findInputIssue', () => {
  it('finds nothing wrong in ordinary JSON', () => {
    expect(findInputIssue({ a: [1, 'x', { b: null, c: true }], d: '😀' })).toBeNull();
    expect(findInputIssue(Buffer.from([0]))).toBeNull();
  });

  it('names the field of a NUL character or lone surrogate in a value', () => {
    expect(findInputIssue({ action: { params: { list: ['ok', 'a\u0000'] } } })).toEqual({
      field: 'action.params.list.1',
      reason: 'contains a NUL character',
    });
    expect(findInputIssue({ title: '\ud83d' }, 'body')).toEqual({
      field: 'body.title',
      reason: 'contains a lone surrogate',
    });
  });

  it('refuses a bad key and echoes its name cleaned', () => {
    expect(findInputIssue({ custom: { 'k\u0000': 1 } })).toEqual({
      field: 'custom.k\uFFFD',
      reason: 'key contains a NUL character',
    });
  });

  it('allows nesting up to the bound and refuses one level more, even very deep', () => {
    expect(findInputIssue(nested(MAX_INPUT_DEPTH))).toBeNull();
    expect(findInputIssue(nested(MAX_INPUT_DEPTH + 1))?.reason).toBe(
      `is nested deeper than ${MAX_INPUT_DEPTH} levels`,
    );
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
    expect(findInputIssue(deep)?.reason).toMatch(/nested deeper/);
  });

  it('keeps an echoed field name short', () => {
    const long = 'k'.repeat(10_000);
    const issue = findInputIssue({ [long]: { [long]: '\u0000' } });
    expect(issue!.field.length).toBeLessThan(300);
  });
});
