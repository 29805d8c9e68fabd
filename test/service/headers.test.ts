import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/http/console.js';
import { DOCS_CSP } from '../../src/http/docs.js';
import { newId } from '../../src/lib/ids.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { createOrganization } from '../helpers/fixtures.js';
import { signUp, uniqueEmail, type Tokens } from '../helpers/identity.js';
import { form } from '../helpers/multipart.js';
import { startTestService, type TestService } from '../helpers/service.js';

/**
 * The headers of answers, route by route (docs/api.md, "Caching"; docs/console.md, "Security
 * headers"): `Cache-Control: no-store` on every answer to a request with a credential and on
 * every answer carrying tokens, while public answers keep theirs; the browser pages' headers
 * on every answer under /console and /docs; HSTS there when PUBLIC_URL is https.
 */

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const ASSET = '/console/assets/app-0123abcd.js';
const SECRET = 'do-not-serve-me';

/** What the rows' requests need, made once the service runs. */
interface World {
  owner: EoaSigner;
  bearer: Record<string, string>;
  apiKey: Record<string, string>;
  tokens: Tokens & { email: string; password: string };
  selfSignupOrg: string;
  execute: unknown;
  publicFile: string;
  privateFile: string;
  batch: string;
}

/** A value, or null: the header is absent. */
type Expected = Record<string, string | null>;

interface Row {
  name: string;
  request: (w: World) => InjectOptions;
  status: number;
  headers: Expected;
}

const NO_STORE = { 'cache-control': 'no-store' };
const NO_CACHE_HEADER = { 'cache-control': null };

/** The headers of a browser page's answers (console or docs), on a service at an https URL. */
function pageHeaders(csp: string): Expected {
  return {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'strict-transport-security': 'max-age=31536000',
  };
}
const CONSOLE = pageHeaders(CONSOLE_CSP);
const DOCS = pageHeaders(DOCS_CSP);

const get = (url: string, headers: Record<string, string> = {}): InjectOptions => ({
  method: 'GET',
  url,
  headers,
});
const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
  ({ method: 'POST', url, payload, headers }) as InjectOptions;

const ROWS: Row[] = [
  // Answers that carry tokens, asked without a credential.
  {
    name: 'a password sign-in',
    request: (w) => post('/auth/login', { email: w.tokens.email, password: w.tokens.password }),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'a standalone sign-up',
    request: () =>
      post('/organizations/wallets', { email: uniqueEmail(), password: 'correct horse battery' }),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'a sign-up into an organization (POST /wallets, no credential)',
    request: (w) =>
      post('/wallets', {
        organization_id: w.selfSignupOrg,
        email: uniqueEmail(),
        password: 'correct horse battery',
      }),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'a refresh',
    request: (w) => post('/auth/refresh-token', { refresh_token: w.tokens.refresh_token }),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'a refused refresh (a token route answers no-store whatever it says)',
    request: () => post('/auth/refresh-token', { refresh_token: 'not-a-refresh-token' }),
    status: 401,
    headers: NO_STORE,
  },
  // Answers to a request with a credential.
  {
    name: 'an authenticated read with a bearer token',
    request: (w) => get('/wallets/me', w.bearer),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'an authenticated read with an API key',
    request: (w) => get('/templates', w.apiKey),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'an execute with a bearer token',
    request: (w) => post('/ebus/execute', w.execute as object, w.owner.headers),
    status: 200,
    headers: NO_STORE,
  },
  {
    name: 'a 404 to an authenticated request',
    request: (w) => get(`/objects/${newId('object')}`, w.bearer),
    status: 404,
    headers: NO_STORE,
  },
  {
    name: 'a 403 to an API key on a route for persons',
    request: (w) => get('/wallets/me', w.apiKey),
    status: 403,
    headers: NO_STORE,
  },
  {
    name: 'a 401 to a credential that does not verify',
    request: () => get('/templates', { 'x-api-key': 'onsk_not_a_key' }),
    status: 401,
    headers: NO_STORE,
  },
  {
    name: 'a 404 for no route, to an authenticated request',
    request: (w) => get('/no/such/route', w.bearer),
    status: 404,
    headers: NO_STORE,
  },
  {
    name: 'a public read asked with a credential',
    request: (w) => get('/public/network', w.apiKey),
    status: 200,
    headers: NO_STORE,
  },
  // Public answers keep theirs.
  {
    name: 'a public read without a credential',
    request: () => get('/public/network'),
    status: 200,
    headers: NO_CACHE_HEADER,
  },
  {
    name: 'a 401 without a credential',
    request: () => get('/templates'),
    status: 401,
    headers: NO_CACHE_HEADER,
  },
  {
    name: "a batch's content, asked with a credential (its own header)",
    request: (w) => get(`/batches/${w.batch}/content`, w.bearer),
    status: 200,
    headers: { 'cache-control': 'public, max-age=5' },
  },
  {
    name: 'a public file, asked with a credential (its own header)',
    request: (w) => get(`/storage/files/${w.publicFile}`, w.bearer),
    status: 200,
    headers: { 'cache-control': 'public, max-age=31536000, immutable' },
  },
  {
    name: 'a public file without a credential',
    request: (w) => get(`/storage/files/${w.publicFile}`),
    status: 200,
    headers: { 'cache-control': 'public, max-age=31536000, immutable' },
  },
  {
    name: 'a private file (its own header)',
    request: (w) => get(`/storage/files/${w.privateFile}`, w.apiKey),
    status: 200,
    headers: { 'cache-control': 'private, no-store' },
  },
  {
    name: 'an API answer carries no HSTS (the TLS proxy sends it)',
    request: () => get('/healthz'),
    status: 200,
    headers: { 'strict-transport-security': null, 'cross-origin-opener-policy': null },
  },
  // The console.
  {
    name: 'the console page',
    request: () => get('/console/'),
    status: 200,
    headers: { ...CONSOLE, 'cache-control': 'no-cache' },
  },
  {
    name: 'the console page, asked with a credential (its own header)',
    request: (w) => get('/console/', w.bearer),
    status: 200,
    headers: { ...CONSOLE, 'cache-control': 'no-cache' },
  },
  {
    name: 'a deep link of the console',
    request: () => get('/console/sign-in'),
    status: 200,
    headers: CONSOLE,
  },
  {
    name: 'a built asset, asked with a credential (its own header)',
    request: (w) => get(ASSET, w.bearer),
    status: 200,
    headers: { ...CONSOLE, 'cache-control': 'public, max-age=31536000, immutable' },
  },
  {
    name: 'a missing console file',
    request: () => get('/console/assets/missing.js'),
    status: 404,
    headers: CONSOLE,
  },
  {
    name: 'a dotfile of the build',
    request: () => get('/console/.secret'),
    status: 404,
    headers: CONSOLE,
  },
  {
    name: 'a dotfile among the assets',
    request: () => get('/console/assets/.hidden.js'),
    status: 404,
    headers: CONSOLE,
  },
  {
    name: 'the bare console address (a redirect)',
    request: () => get('/console'),
    status: 301,
    headers: CONSOLE,
  },
  // The reference page.
  { name: 'the reference page', request: () => get('/docs/'), status: 200, headers: DOCS },
  {
    name: 'the reference page without its slash',
    request: () => get('/docs'),
    status: 200,
    headers: DOCS,
  },
  {
    name: "the reference page's initializer",
    request: () => get('/docs/static/swagger-initializer.js'),
    status: 200,
    headers: DOCS,
  },
  {
    name: "the reference page's stylesheet (a static file)",
    request: () => get('/docs/static/swagger-ui.css'),
    status: 200,
    headers: DOCS,
  },
  {
    name: "the reference page's description",
    request: () => get('/docs/json'),
    status: 200,
    headers: DOCS,
  },
  {
    name: 'the reference page with a query string: sent again without it',
    request: () => get('/docs/?utm_source=mail'),
    status: 302,
    headers: { ...DOCS, location: '/docs/' },
  },
  {
    name: 'the reference page without its slash, with a query string',
    request: () => get('/docs?x=1'),
    status: 302,
    headers: { ...DOCS, location: '/docs' },
  },
  {
    name: 'a missing file under /docs',
    request: () => get('/docs/static/missing.js'),
    status: 404,
    headers: DOCS,
  },
];

let consoleDir: string;
let storageDir: string;

/** A built console of three files and two dotfiles. */
async function fakeConsole(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ons-console-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(
    path.join(dir, 'index.html'),
    `<!doctype html><html><head><script type="module" src="${ASSET}"></script></head></html>`,
  );
  await writeFile(path.join(dir, ASSET.replace('/console/', '')), 'export {};');
  await writeFile(path.join(dir, '.secret'), SECRET);
  await writeFile(path.join(dir, 'assets', '.hidden.js'), SECRET);
  return dir;
}

async function uploadFile(svc: TestService, headers: Record<string, string>, isPublic: boolean) {
  const f = form([
    { name: 'file', filename: 'p.png', data: PNG },
    { name: 'is_public', data: String(isPublic) },
  ]);
  const res = await svc.app.inject({
    method: 'POST',
    url: '/storage/upload',
    headers: { ...headers, 'content-type': f.type },
    payload: f.payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ id: string }>().id;
}

/** A sealed batch of one mint, and the signed body of another mint (for the execute row). */
async function sealedBatch(svc: TestService, owner: EoaSigner) {
  const settle = async () => {
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
  };
  await fund(svc, owner.orgId, 10n ** 21n);
  const templateId = await createTemplate(svc, owner.orgId);
  await settle();
  const first = await signEoa(svc, owner, {
    name: 'mint',
    params: { template_id: templateId },
    nonce: 0,
  });
  const res = await svc.app.inject(post('/ebus/execute', first, owner.headers));
  expect(res.statusCode, res.body).toBe(200);
  await settle();
  const batch = res.json<{ action: { batch_id: string } }>().action.batch_id;
  const next = await signEoa(svc, owner, {
    name: 'mint',
    params: { template_id: templateId },
    nonce: 1,
  });
  return { batch, execute: next };
}

describe('answer headers, on a service at an https address', () => {
  let svc: TestService;
  let world: World;

  beforeAll(async () => {
    consoleDir = await fakeConsole();
    storageDir = await mkdtemp(path.join(tmpdir(), 'ons-files-'));
    svc = await startTestService({
      env: {
        PUBLIC_URL: 'https://ons.example',
        CONSOLE_DIR: consoleDir,
        STORAGE_DIR: storageDir,
        BATCH_MAX_ACTIONS: '1',
      },
    });
    const owner = await createSigner(svc);
    const { batch, execute } = await sealedBatch(svc, owner);
    world = {
      owner,
      bearer: owner.headers,
      apiKey: (await createApiKey(svc, owner, ['templates.read', 'storage.read'])).headers,
      tokens: await signUp(svc),
      selfSignupOrg: await createOrganization(svc, { allowSelfSignup: true }),
      execute,
      publicFile: await uploadFile(svc, owner.headers, true),
      privateFile: await uploadFile(svc, owner.headers, false),
      batch,
    };
  });
  afterAll(async () => {
    await svc?.stop();
    await rm(storageDir, { recursive: true, force: true });
  });

  it.each(ROWS.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const res = await svc.app.inject(row.request(world));
    expect(res.statusCode, res.body).toBe(row.status);
    for (const [name, value] of Object.entries(row.headers)) {
      expect(res.headers[name] ?? null, name).toBe(value);
    }
    expect(res.body).not.toContain(SECRET);
  });

  it('marks every route whose answer carries tokens, and only those', () => {
    const marked = svc
      .routeTable()
      .filter((r) => r.noStore === true)
      .map((r) => `${r.method} ${r.url}`)
      .sort();
    expect(marked).toEqual(
      [
        'POST /auth/login',
        'POST /auth/otp/verify',
        'POST /auth/password-reset/confirm',
        'POST /auth/provider/google',
        'POST /auth/refresh-token',
        'POST /organizations/switch',
        'POST /organizations/wallets',
        'POST /wallets',
        'POST /wallets/connect/eoa',
        'POST /wallets/connect/passkey/login/verify',
        'POST /wallets/connect/passkey/register/verify',
      ].sort(),
    );
  });
});

describe('answer headers, on a service at an http address', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { CONSOLE_DIR: consoleDir } });
  });
  afterAll(async () => {
    await svc?.stop();
    await rm(consoleDir, { recursive: true, force: true });
  });

  it.each(['/console/', ASSET, '/docs/', '/docs/static/swagger-initializer.js'])(
    '%s: the page headers, without HSTS',
    async (url) => {
      const res = await svc.app.inject(get(url));
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(res.headers['strict-transport-security']).toBeUndefined();
    },
  );
});
