import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSigner, createTemplate, type EoaSigner } from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';

/**
 * Hostile input that once answered 500, each a 4xx with the flat `{code, message}` body now
 * (docs/api.md, "Errors"); found by a review that threw hostile input at every route. And
 * errors whose text echoed the caller's cut through a character (docs/api.md, "Answers and
 * errors").
 */
const svc = useTestService(async () => {
  // A console of one page, so /console's static files are served whatever was built.
  const dir = await mkdtemp(path.join(tmpdir(), 'ons-console-'));
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>console</title>');
  return { env: { CONSOLE_DIR: dir } };
});
let owner: EoaSigner;
let template: string;

beforeAll(async () => {
  owner = await createSigner(svc);
  template = await createTemplate(svc, owner.orgId, { isPublic: true });
});

type Res = { statusCode: number; body: string };
function expectClientError(res: Res, where: string, status?: number) {
  const seen = `${where} → ${res.statusCode} ${res.body.slice(0, 200)}`;
  if (status !== undefined) expect(res.statusCode, seen).toBe(status);
  expect(res.statusCode, seen).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, seen).toBeLessThan(500);
  const body = JSON.parse(res.body) as { code: unknown; message: unknown };
  expect(Number.isInteger(body.code), seen).toBe(true);
  expect(typeof body.message, seen).toBe('string');
}

describe('hostile input answers 4xx, never 500', () => {
  it('an integer in a query or path that overflows to ±Infinity (Ajv skips min/max then)', async () => {
    for (const url of [
      `/templates/${template}/versions?limit=1e309`,
      `/templates/${template}/versions?limit=-1e309`,
      `/templates/${template}/versions?before=1e309`,
      `/public/templates/${template}/versions/1e309`,
      `/public/templates/${template}/versions/-1e309`,
    ]) {
      const res = await svc.get(url, url.startsWith('/public') ? {} : owner.headers);
      expectClientError(res, url, 400);
      expect(res.body, url).toMatch(/finite/);
    }
    // A finite value in range still passes.
    const ok = await svc.get(`/templates/${template}/versions?limit=5`, owner.headers);
    expect(ok.statusCode, ok.body).toBe(200);
  });

  it('a malformed multipart body on POST /storage/upload', async () => {
    const cases: [string, string][] = [
      ['multipart/form-data', 'x'], // no boundary
      ['multipart/form-data; boundary=b', '--b\r\n'], // ends mid-part
      [
        'multipart/form-data; boundary=b',
        '--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc',
      ], // no closing boundary
    ];
    for (const [type, payload] of cases) {
      const res = await svc.app.inject({
        method: 'POST',
        url: '/storage/upload',
        headers: { ...owner.headers, 'content-type': type },
        payload,
      });
      expectClientError(res, `${type} ${JSON.stringify(payload)}`, 400);
    }
  });

  it('a passkey clientDataJSON whose challenge holds a NUL (PostgreSQL text refuses it)', async () => {
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: 'a\u0000b', origin: 'https://x' }),
    ).toString('base64url');
    const common = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', clientExtensionResults: {} };
    const login = {
      ...common,
      response: { clientDataJSON, authenticatorData: 'AAAA', signature: 'AAAA' },
    };
    const register = { ...common, response: { clientDataJSON, attestationObject: 'AAAA' } };
    for (const [url, credential, headers] of [
      ['/wallets/connect/passkey/login/verify', login, {}],
      ['/wallets/connect/passkey/register/verify', register, {}],
      ['/wallets/me/credentials/passkey', register, owner.headers],
    ] as const) {
      const res = await svc.post(url, { credential }, headers);
      expectClientError(res, url, 401);
    }
  });

  it('Range and conditional headers on the static files (/console, /docs/static)', async () => {
    for (const [headers, status] of [
      [{ range: 'bytes=999999-' }, 416],
      [{ 'if-match': '"nope"' }, 412],
      [{ 'if-unmodified-since': 'Mon, 01 Jan 1990 00:00:00 GMT' }, 412],
    ] as const) {
      for (const url of ['/console/', '/console/index.html', '/docs/static/swagger-ui.css']) {
        const res = await svc.get(url, headers);
        expectClientError(res, `${url} ${JSON.stringify(headers)}`, status);
      }
    }
    // Without them the files are served.
    expect((await svc.get('/console/index.html')).statusCode).toBe(200);
    expect((await svc.get('/docs/static/swagger-ui.css')).statusCode).toBe(200);
  });
});

/** Every string of a JSON value, keys included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(Array.isArray(value) ? [] : [k]),
    ...stringsOf(v),
  ]);
}

describe("an error that echoes the caller's text cut short", () => {
  // The text is cut where its emoji's surrogate pair straddles the cut: the answer once held
  // the pair's first half alone (`\ud83d`), which a strict JSON reader refuses.
  const emoji = '\u{1F600}';
  const cases: [string, () => Promise<Res>][] = [
    [
      'a custom field name in a structured query (cut at 80)',
      () => {
        const key = `custom.${'a'.repeat(72)}${emoji}x`;
        return svc.get(`/indexer/query?${encodeURIComponent(key)}=1`, owner.headers);
      },
    ],
    [
      'a custom_schema pattern the regular expression engine refuses (its message cut at 200)',
      () =>
        svc.post(
          '/templates',
          {
            name: 'cut',
            custom_schema: {
              type: 'object',
              properties: { a: { type: 'string', pattern: `${'a'.repeat(198)}${emoji}(` } },
            },
          },
          owner.headers,
        ),
    ],
    [
      'a custom_schema keyword the schema compiler refuses (its message cut at 300)',
      () =>
        svc.post(
          '/templates',
          { name: 'cut', custom_schema: { type: 'object', [`${'k'.repeat(268)}${emoji}`]: 1 } },
          owner.headers,
        ),
    ],
  ];

  it.each(cases)('%s: 400 code 3 whose text is well-formed', async (what, send) => {
    const res = await send();
    expectClientError(res, what, 400);
    const strings = stringsOf(JSON.parse(res.body));
    const broken = strings.filter(
      (s) => !(s as unknown as { isWellFormed(): boolean }).isWellFormed(),
    );
    expect(broken, res.body).toEqual([]);
    // The half pair is shown as U+FFFD, the text before it kept.
    expect(res.body, what).toContain('\uFFFD');
  });
});
