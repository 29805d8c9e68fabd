import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The package as a client installs it: `npm run build -w sdk` compiles sdk/src alone (its
 * rootDir: an import of the service's code would fail the build) for browsers and Node (DOM
 * lib, no Node types), and plain Node, not tsx, loads `@ons/sdk` from sdk/dist.
 */
describe('@ons/sdk as built', () => {
  it('builds and runs from dist in plain Node', { timeout: 120_000 }, async () => {
    await run('npm', ['run', 'build', '-w', 'sdk'], { cwd: ROOT });
    const manifest = JSON.parse(await readFile(`${ROOT}sdk/package.json`, 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
      type: string;
    };
    expect(manifest.type).toBe('module');
    const entry = manifest.exports['.']!;
    expect(await readFile(`${ROOT}sdk/${entry.types}`, 'utf8')).toContain('createOnsClient');

    const script = `
      import * as sdk from '@ons/sdk';
      import { readFileSync } from 'node:fs';
      const v = JSON.parse(readFileSync('test/vectors/action-text.json', 'utf8'));
      const w = JSON.parse(readFileSync('test/vectors/webhook-signature.json', 'utf8')).cases[0];
      const text = sdk.buildActionText({ network: v.network, organizationId: v.organization_id, ...v.action });
      const hook = await sdk.verifyWebhook(w.header, w.body, w.signing_key_hex, { now: Number(w.timestamp) * 1000 });
      const client = sdk.createOnsClient({ baseUrl: 'http://127.0.0.1:9' });
      console.log(JSON.stringify({
        exports: Object.keys(sdk).sort(),
        text: text === v.text,
        hash: (await sdk.actionHash(text)) === v.hash,
        hook: hook.ok,
        client: typeof client.GET,
      }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
    });
    const out = JSON.parse(stdout) as Record<string, unknown>;
    expect(out).toEqual({
      exports: expect.arrayContaining([
        'OnsError',
        'createOnsClient',
        'buildActionText',
        'verifyWebhook',
        'browserPasskey',
      ]) as unknown,
      text: true,
      hash: true,
      hook: true,
      client: 'function',
    });
  });
});
