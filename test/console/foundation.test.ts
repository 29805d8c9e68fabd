import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import {
  checkPage,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsoleService,
  describeWithChromium,
} from './harness.js';

/**
 * Swagger UI renders the whole API description before its heading shows: ~6 s alone on a
 * two-core machine, 14 s in a full run beside the other suites, past the harness's 10 s.
 */
const DOCS_RENDER = { timeout: 20_000 };

/** Adds a script with code of its own to the page; answers whether it ran. */
function runsInlineScript(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const g = globalThis as unknown as {
      document: {
        createElement(tag: string): { textContent: string };
        body: { appendChild(n: unknown): void };
      };
      inlineRan?: boolean;
    };
    const script = g.document.createElement('script');
    script.textContent = 'globalThis.inlineRan = true';
    g.document.body.appendChild(script);
    return g.inlineRan === true;
  });
}

describeWithChromium('the console, served at /console', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('serves index.html with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${live.origin}/console/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(csp).toContain(directive);
    }
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    // Every <script> loads a file; none carries code of its own.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/\bsrc="\/console\/assets\/[^"]+\.js"/);
      expect(body!.trim()).toBe('');
    }
    expect(html).not.toMatch(/\sstyle=/);
  });

  it('answers index.html for a deep link and a JSON 404 for a missing file', async () => {
    const deep = await fetch(`${live.origin}/console/api-keys`);
    expect(deep.status).toBe(200);
    expect(deep.headers.get('content-type')).toMatch(/text\/html/);
    const missing = await fetch(`${live.origin}/console/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 5 });
    const bare = await fetch(`${live.origin}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(bare.headers.get('location')).toBe('/console/');
  });

  it('answers a JSON 404 for any path that leaves the build, never a file or a 500', async () => {
    for (const url of [
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/assets/..%2f..%2f..%2fpackage.json',
      '/console/%2e%2e%2findex.html',
      '/console/..%5c..%5cpackage.json',
      '/console/.env',
    ]) {
      const res = await live.svc.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ code: 5 });
    }
  });

  it('serves built assets as immutable files', async () => {
    const html = await (await fetch(`${live.origin}/console/`)).text();
    const src = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const res = await fetch(`${live.origin}${src}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toContain('immutable');
  });

  it('leaves /console out of the API description', async () => {
    const doc = (await (await fetch(`${live.origin}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });

  it('serves the reference page at /docs under a strict CSP, rendered with no refusal', async () => {
    for (const url of ['/docs/', '/docs/static/swagger-initializer.js', '/docs/json']) {
      const res = await fetch(`${live.origin}${url}`);
      expect(res.status, url).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ]) {
        expect(csp, url).toContain(directive);
      }
      expect(csp, url).not.toMatch(/script-src[^;]*unsafe/);
    }
    const { page, problems, context } = await browser.newPage();
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(live.origin)) elsewhere.push(r.url());
    });
    await page.goto(`${live.origin}/docs/`);
    await page.getByRole('heading', { name: /Object Network Service/ }).waitFor(DOCS_RENDER);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    // And the policy is in force: a script the page did not ship does not run.
    expect(await runsInlineScript(page)).toBe(false);
    await context.close();
  });

  it('renders the reference page from an address with a query string', async () => {
    // A link from a mail or a tracker's tag: Swagger UI built the description's address from
    // the whole page address (`/docs/?x/./json`), so the page never loaded it.
    const { page, problems, context } = await browser.newPage();
    await page.goto(`${live.origin}/docs/?utm_source=mail#/health`);
    await page.getByRole('heading', { name: /Object Network Service/ }).waitFor(DOCS_RENDER);
    expect(new URL(page.url()).search).toBe('');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows a not-found page for an unknown address, with no CSP refusal', async () => {
    const { page, problems, context } = await browser.newPage();
    await page.goto(`${live.origin}/console/no/such/page`);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await checkPage(page, 'not-found')).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('makes the browser refuse an inline script (and the harness sees the refusal)', async () => {
    const { page, problems, context } = await browser.newPage();
    await page.goto(`${live.origin}/console/`);
    await page.getByRole('heading', { name: 'Sign in first' }).waitFor();
    expect(await runsInlineScript(page)).toBe(false);
    await expect.poll(() => problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).toMatch(/Content Security Policy/);
    await context.close();
  });

  it('finds serious accessibility violations when a page has them', async () => {
    const { page, context } = await browser.newPage();
    await page.goto(`${live.origin}/console/sign-in`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.evaluate(() => {
      const g = globalThis as unknown as {
        document: {
          createElement(tag: string): { setAttribute(k: string, v: string): void };
          querySelector(s: string): { appendChild(n: unknown): void };
        };
      };
      const input = g.document.createElement('input'); // no label
      input.setAttribute('type', 'text');
      g.document.querySelector('main').appendChild(input);
    });
    const violations = await checkPage(page, 'axe-self-check');
    expect(violations.join('\n')).toMatch(/label/);
    await context.close();
  });
});

describe('the console when it is not built', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { CONSOLE_DIR: '/nonexistent/console/dist' } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 503 code 14 with a message under /console and still serves the API', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      code: 14,
      message: 'the web console is not built on this server (run `npm run build`)',
    });
    expect(svc.logs.some((l) => String(l.msg).includes('the web console is not built'))).toBe(true);
    const health = await svc.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
  });
});
