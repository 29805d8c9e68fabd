import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The repository cites only itself and public standards (docs/architecture.md, "Conventions
 * for contributors"): a comment or a page that relies on a rule names the docs/ page and
 * section that states it, never a document a clone does not have (a design note, an
 * interface specification, a path into a folder outside the repository). This test reads
 * every text file of the checkout that git would track (the tree less what .gitignore
 * names) and fails naming file:line for each such citation. Pure: it reads files, and needs
 * no git (CI runs the suite in a copy of the checkout without its .git).
 */
const root = join(import.meta.dirname, '..');

/*
 * The forbidden words are put together from pieces, so this file does not match its own
 * patterns and needs no exception.
 */
const SECTION = '\u00a7';
const DESIGN_NOTE = ['design', 'md'].join('.');
const OUTSIDE_FOLDER = ['shared', ''].join('/');
const OUTSIDE_SPEC = ['object-network-service', 'md'].join('.');
const SPEC = ['sp', 'ec'].join('');
const WORK_DIR = ['', 'work', ''].join('/');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Citations of documents outside the repository, each with what it catches. */
const OUTSIDE: { pattern: RegExp; what: string }[] = [
  {
    pattern: new RegExp(escape(DESIGN_NOTE), 'i'),
    what: 'a design document outside the repository',
  },
  {
    pattern: new RegExp(`\\bdesign ${SECTION}`, 'i'),
    what: 'a section of an outside design document',
  },
  {
    pattern: new RegExp(`\\b${SPEC}(ification)?('s)? (${SECTION}|section\\b|\\d)`, 'i'),
    what: 'a section of an outside specification',
  },
  { pattern: new RegExp(`\\bthe ${SPEC}(ification)?\\b`, 'i'), what: 'an outside specification' },
  { pattern: new RegExp(escape(OUTSIDE_SPEC), 'i'), what: 'the outside interface specification' },
  {
    pattern: new RegExp(`${escape(WORK_DIR)}|(?<![\\w./-])${escape(OUTSIDE_FOLDER)}`),
    what: 'a path outside the repository',
  },
];

/**
 * A bare section sign continues a citation of a public standard, named on its line or the one
 * before (RFC 9162, ECMA-262 and the like); anything else cites a document we do not have.
 */
const PUBLIC_STANDARD = /\b(RFC|ECMA|C2SP|OWASP|W3C|EIP|ISO|NIST|FIPS)\b/;

/**
 * Whether .gitignore's line `pattern` names `rel` (a path from the root, '/'-separated): the
 * file's simple forms only, as it uses them (a name, a `dir/path/`, a `*.ext`).
 */
function ignoredBy(pattern: string, rel: string, name: string): boolean {
  const p = pattern.replace(/\/$/, '');
  if (p.startsWith('*.')) return name.endsWith(p.slice(1));
  return p.includes('/') ? rel === p.replace(/^\//, '') : name === p;
}

/** The checkout's files that git would track: every file, less .git and what .gitignore names. */
function trackedTextFiles(): string[] {
  const patterns = readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.name === '.git' || patterns.some((p) => ignoredBy(p, rel, entry.name))) continue;
      if (entry.isDirectory()) walk(rel);
      else if (entry.isFile()) out.push(rel);
    }
  };
  walk('');
  return out;
}

function findings(): string[] {
  const found: string[] = [];
  for (const file of trackedTextFiles()) {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) continue; // binary
    const lines = bytes.toString('utf8').split('\n');
    lines.forEach((line, i) => {
      const what = OUTSIDE.filter(({ pattern }) => pattern.test(line)).map((o) => o.what);
      if (line.includes(SECTION) && !PUBLIC_STANDARD.test(`${lines[i - 1] ?? ''} ${line}`)) {
        what.push('a section sign of no public standard');
      }
      if (what.length > 0) found.push(`${file}:${i + 1}: ${what.join('; ')}: ${line.trim()}`);
    });
  }
  return found;
}

describe('references', () => {
  it('cite no document outside the repository', () => {
    expect(findings()).toEqual([]);
  });

  it('are looked for in every file git would track, and in nothing it ignores', () => {
    const files = trackedTextFiles();
    expect(files).toContain('README.md');
    expect(files).toContain('src/no-outside-references.test.ts');
    expect(files.filter((f) => /(^|\/)(node_modules|dist|\.git)\//.test(f))).toEqual([]);
  });

  it('are found by the patterns above', () => {
    const hit = (line: string) =>
      OUTSIDE.some(({ pattern }) => pattern.test(line)) ||
      (line.includes(SECTION) && !PUBLIC_STANDARD.test(line));
    expect(hit(`// see ${DESIGN_NOTE} ${SECTION}5`)).toBe(true);
    expect(hit(`/** The groups of ${SPEC} ${SECTION}8. */`)).toBe(true);
    expect(hit(`summary: Passkey options (${SPEC} 2.7)`)).toBe(true);
    expect(hit(`as the ${SPEC} asks`)).toBe(true);
    expect(hit(`-- read ${WORK_DIR}${OUTSIDE_FOLDER}x.md`)).toBe(true);
    expect(hit(`(${OUTSIDE_FOLDER}${DESIGN_NOTE})`)).toBe(true);
    expect(hit(`read ${OUTSIDE_SPEC} first`)).toBe(true);
    expect(hit(`the rule of ${SECTION}5, rule 7`)).toBe(true);
    expect(hit(`/** RFC 9162 ${SECTION}2.1.3.2: the audit path. */`)).toBe(false);
    expect(hit('(docs/ebus.md, "The text to sign")')).toBe(false);
    expect(hit('const spec = parseList(q, listSpec);')).toBe(false);
  });
});
