import { describe, expect, it } from 'vitest';
import { contentDisposition } from './content-disposition.js';

describe('contentDisposition', () => {
  it.each([
    ['plain.png', `inline; filename="plain.png"; filename*=UTF-8''plain.png`],
    [
      'my report (final).pdf',
      `inline; filename="my report (final).pdf"; filename*=UTF-8''my%20report%20%28final%29.pdf`,
    ],
    [
      'say "hi" \\ there.txt',
      `inline; filename="say \\"hi\\" \\\\ there.txt"; filename*=UTF-8''say%20%22hi%22%20%5C%20there.txt`,
    ],
    [
      'Grüße 東京.png',
      `inline; filename="Gr__e __.png"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E6%9D%B1%E4%BA%AC.png`,
    ],
    ['100%.txt', `inline; filename="100_.txt"; filename*=UTF-8''100%25.txt`],
    ["it's*.txt", `inline; filename="it's*.txt"; filename*=UTF-8''it%27s%2A.txt`],
    ['🎉.txt', `inline; filename="_.txt"; filename*=UTF-8''%F0%9F%8E%89.txt`],
  ])('%s', (name, header) => {
    expect(contentDisposition(name)).toBe(header);
  });
});
