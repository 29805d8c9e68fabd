import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { boundaries } from '../eslint.boundaries.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The project's boundary rules alone (no type information needed), on text at a path. */
async function lint(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ languageOptions: { parser: tseslint.parser } }, ...boundaries],
  });
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint keeps the layers apart', () => {
  it('refuses a route that imports a repo, drizzle-orm or pg', async () => {
    const path = 'src/modules/widgets/routes.ts';
    expect(await lint(path, `import { find } from './repo.js';\n`)).toEqual([
      expect.stringMatching(/never a repo/),
    ]);
    expect(await lint(path, `import { sql } from 'drizzle-orm';\n`)).toEqual([
      expect.stringMatching(/SQL lives in repos/),
    ]);
    expect(await lint(path, `import pg from 'pg';\n`)).toEqual([
      expect.stringMatching(/only src\/db/),
    ]);
  });

  it('refuses a service that imports fastify or src/http', async () => {
    const path = 'src/modules/widgets/service.ts';
    expect(await lint(path, `import type { FastifyRequest } from 'fastify';\n`)).toEqual([
      expect.stringMatching(/never see HTTP/),
    ]);
    expect(await lint(path, `import { authOf } from '../../http/auth.js';\n`)).toEqual([
      expect.stringMatching(/never see HTTP/),
    ]);
  });

  it("refuses a module that imports another module's repo", async () => {
    // Past the other module's index.ts too: both rules speak.
    const bothRules = expect.arrayContaining([
      expect.stringMatching(/never its repo/),
      expect.stringMatching(/only through its index\.ts/),
    ]);
    expect(
      await lint('src/modules/widgets/service.ts', `import { x } from '../gadgets/repo.js';\n`),
    ).toEqual(bothRules);
    expect(
      await lint(
        'src/modules/widgets/parts/a.ts',
        `import { x } from '../../gadgets/repo/b.js';\n`,
      ),
    ).toEqual(bothRules);
  });

  it('refuses a module that reaches another module past its index.ts, types included', async () => {
    const face = /only through its index\.ts \('gadgets\/index\.js'\)/;
    const path = 'src/modules/widgets/service.ts';
    expect(await lint(path, `import { make } from '../gadgets/service.js';\n`)).toEqual([
      expect.stringMatching(face),
    ]);
    expect(await lint(path, `import type { Gadget } from '../gadgets/types.js';\n`)).toEqual([
      expect.stringMatching(face),
    ]);
    expect(await lint(path, `export { GadgetSchema } from '../gadgets/schema.js';\n`)).toEqual([
      expect.stringMatching(face),
    ]);
    expect(await lint(path, `import { x } from '../gadgets/sub/index.js';\n`)).toEqual([
      expect.stringMatching(face),
    ]);
    // From a file one folder down, `../../gadgets/…` is the other module.
    expect(
      await lint('src/modules/widgets/parts/a.ts', `import { y } from '../../gadgets/hooks.js';\n`),
    ).toEqual([expect.stringMatching(face)]);
    // Its own files at any depth, and other modules' faces, are fine.
    expect(
      await lint(
        'src/modules/widgets/parts/a.ts',
        `import { a } from '../service.js';\nimport { b } from '../../gadgets/index.js';\nimport { c } from '../../../lib/clock.js';\nexport { a, b, c };\n`,
      ),
    ).toEqual([]);
  });

  it('refuses an index.ts that hands on anything of its repo', async () => {
    const path = 'src/modules/widgets/index.ts';
    const repo = /re-exports nothing of its repo/;
    expect(await lint(path, `export { findWidget } from './repo.js';\n`)).toEqual([
      expect.stringMatching(repo),
    ]);
    expect(await lint(path, `export type { WidgetRow } from './repo.js';\n`)).toEqual([
      expect.stringMatching(repo),
    ]);
    expect(await lint(path, `export * from './repo/widgets.js';\n`)).toEqual([
      expect.stringMatching(repo),
    ]);
    expect(
      await lint(path, `import { findWidget } from './repo.js';\nexport { findWidget };\n`),
    ).toEqual([expect.stringMatching(repo)]);
    expect(await lint(path, `export { widgetPage } from './service.js';\n`)).toEqual([]);
    // A service may use its own repo.
    expect(
      await lint('src/modules/widgets/service.ts', `export { findWidget } from './repo.js';\n`),
    ).toEqual([]);
  });

  it('refuses SQL outside a repo and process.env outside src/config.ts', async () => {
    expect(
      await lint('src/modules/widgets/service.ts', `import { sql } from 'drizzle-orm';\n`),
    ).toEqual([expect.stringMatching(/SQL lives in repos/)]);
    expect(
      await lint(
        'src/modules/widgets/service.ts',
        `import { byCreation, parseList } from '../../lib/list.js';\nexport { byCreation, parseList };\n`,
      ),
    ).toEqual([expect.stringMatching(/SQL helpers are for repos/)]);
    expect(await lint('src/lib/thing.ts', `export const port = process.env.PORT;\n`)).toEqual([
      expect.stringMatching(/src\/config\.ts/),
    ]);
  });

  it('refuses OpenTelemetry anywhere but src/lib/otel.ts (tracing off loads none of it)', async () => {
    const code = `import { trace } from '@opentelemetry/api';\nexport { trace };\n`;
    for (const path of [
      'src/http/tracing.ts',
      'src/db/traced-queries.ts',
      'src/modules/widgets/service.ts',
      'src/modules/widgets/repo.ts',
      'src/modules/widgets/routes.ts',
    ]) {
      expect(await lint(path, code), path).toEqual([
        expect.stringMatching(/only src\/lib\/otel\.ts/),
      ]);
    }
    expect(await lint('src/lib/otel.ts', code)).toEqual([]);
  });

  it('lets each layer do its own work', async () => {
    expect(
      await lint(
        'src/modules/widgets/repo.ts',
        `import { sql } from 'drizzle-orm';\nimport type pg from 'pg';\nexport const q = sql\`SELECT 1\`;\nexport type P = pg.Pool;\n`,
      ),
    ).toEqual([]);
    expect(
      await lint(
        'src/modules/widgets/service.ts',
        `import * as repo from './repo.js';\nimport { other } from '../gadgets/index.js';\nimport type { SQL } from 'drizzle-orm';\nexport { repo, other };\nexport type S = SQL;\n`,
      ),
    ).toEqual([]);
    expect(
      await lint(
        'src/modules/widgets/routes.ts',
        `import type { FastifyInstance } from 'fastify';\nimport { WidgetService } from './service.js';\nexport type A = FastifyInstance;\nexport { WidgetService };\n`,
      ),
    ).toEqual([]);
    expect(await lint('src/config.ts', `export const port = process.env.PORT;\n`)).toEqual([]);
  });

  it('finds an import cycle with the same command npm run lint runs', async () => {
    const run = promisify(execFile);
    const dpdm = fileURLToPath(new URL('../node_modules/.bin/dpdm', import.meta.url));
    const args = ['--no-tree', '--no-warning', '--no-progress', '--exit-code', 'circular:1'];
    await expect(
      run(dpdm, [...args, 'test/fixtures/cycle/*.ts'], { cwd: root }),
    ).rejects.toMatchObject({
      code: 1,
    });
    await expect(run(dpdm, [...args, 'src/lib/clock.ts'], { cwd: root })).resolves.toBeTruthy();
  });
});
