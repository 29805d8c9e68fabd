import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  collectRouteTable,
  DOC_PATH,
  FIX_COMMAND,
  renderPermissionsDoc,
} from '../../scripts/permissions-doc.js';
import { RESOURCES } from '../../src/lib/permissions.js';
import { useTestService } from '../helpers/harness.js';

const svc = useTestService();

describe('docs/permissions.md', () => {
  it('is built from the same routes a running service has', async () => {
    const key = (r: { method: string; url: string }) => `${r.method} ${r.url}`;
    const fromScript = (await collectRouteTable()).sort((a, b) => key(a).localeCompare(key(b)));
    const fromService = svc.routeTable().sort((a, b) => key(a).localeCompare(key(b)));
    expect(fromScript).toEqual(fromService);
  });

  it('matches what the code declares', async () => {
    const current = await readFile(DOC_PATH, 'utf8').catch(() => '');
    const expected = renderPermissionsDoc(svc.routeTable());
    expect(
      current === expected,
      `docs/permissions.md is out of date with the code: run \`${FIX_COMMAND}\` and commit it`,
    ).toBe(true);
  });

  it('names every resource a key may hold', async () => {
    const text = await readFile(DOC_PATH, 'utf8');
    for (const r of RESOURCES) expect(text).toContain(`- \`${r}\``);
  });
});
