import { describe, expect, it } from 'vitest';
import { LINK_URL_PATTERN } from './link-url.js';

const pattern = new RegExp(LINK_URL_PATTERN, 'u');
const SAFE_SCHEMES = new Set(['http:', 'https:', 'ipfs:', 'ipns:', 'ar:']);
const RASTER = /^data:image\/(png|gif|jpe?g|webp|avif)[;,]/i;

/**
 * What a page that resolves the link against its own https address would follow: the
 * browser's URL parser decides the scheme, not our reading of the text.
 */
function safeInBrowser(link: string): boolean {
  let url: URL;
  try {
    url = new URL(link, 'https://page.example/objects/');
  } catch {
    return true; // not a URL a browser follows at all
  }
  if (url.protocol === 'data:') return RASTER.test(url.href);
  return SAFE_SCHEMES.has(url.protocol);
}

// Every scheme a renderer might meet, each in several spellings and with what browsers strip.
const SCHEMES = [
  'https',
  'http',
  'ipfs',
  'ipns',
  'ar',
  'javascript',
  'vbscript',
  'file',
  'blob',
  'ftp',
  'mailto',
  'data',
  'x-custom',
];
const SPELLINGS = (s: string) => [s, s.toUpperCase(), s[0]!.toUpperCase() + s.slice(1)];
const WRAPS = [
  (s: string) => `${s}:`,
  (s: string) => `  ${s}:`,
  (s: string) => `\t${s}:`,
  (s: string) => `${s.slice(0, 1)}\t${s.slice(1)}:`,
  (s: string) => `${s.slice(0, 1)}\n${s.slice(1)}:`,
  (s: string) => `\u0000${s}:`,
  (s: string) => `${s}\r:`,
];
const TAILS = ['//host.example/a.png', 'alert(1)', 'text/html,<script>alert(1)</script>'];
const DATA = [
  'data:image/png;base64,iVBORw0KGgo=',
  'data:image/jpeg;base64,AAAA',
  'data:image/jpg,AAAA',
  'DATA:IMAGE/WEBP;base64,AAAA',
  'data:image/avif,AAAA',
  'data:image/gif;base64,R0lGOD',
  'data:image/svg+xml,<svg onload=alert(1)>',
  'data:text/html,<script>alert(1)</script>',
  'data:image/pngx,AAAA',
  'data:,hello',
];
const RELATIVE = [
  '',
  'a.png',
  '/files/a.png',
  '../a.png',
  '//cdn.example/a.png',
  '?q=1',
  '#top',
  'dir/a:b.png',
  './javascript:alert(1)',
  'javascript&colon;alert(1)',
  '1http://x',
];

const cases: string[] = [...DATA, ...RELATIVE];
for (const scheme of SCHEMES) {
  for (const spelled of SPELLINGS(scheme)) {
    for (const wrap of WRAPS) for (const tail of TAILS) cases.push(wrap(spelled) + tail);
  }
}

describe('LINK_URL_PATTERN', () => {
  it(`accepts a link exactly when a browser would follow it somewhere safe (${cases.length} links)`, () => {
    for (const link of cases) {
      // Control characters are refused even where the browser drops them harmlessly.
      // eslint-disable-next-line no-control-regex
      const expected = safeInBrowser(link) && !/[\u0000-\u001f\u007f]/.test(link);
      expect(pattern.test(link), JSON.stringify(link)).toBe(expected);
    }
  });

  it('refuses every spelling of javascript: the browser reads as one', () => {
    const dangerous = cases.filter((c) => !safeInBrowser(c));
    expect(dangerous.length).toBeGreaterThan(100);
    for (const link of dangerous) expect(pattern.test(link), JSON.stringify(link)).toBe(false);
  });
});
