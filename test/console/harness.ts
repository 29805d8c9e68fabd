import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { LocalAccount } from 'viem';
import { createOnsClient } from '@ons/sdk';
import { uniqueEmail } from '../helpers/identity.js';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.js';
import { describeIf } from '../helpers/requires.js';
import { CHROMIUM, CONSOLE_DIST } from './build-setup.js';
import { freePort } from '../helpers/processes.js';

export { CHROMIUM };

/** `describe` for a console test: it needs Debian's Chromium (skipped without, but not in CI). */
export const describeWithChromium = describeIf(existsSync(CHROMIUM), `Chromium at ${CHROMIUM}`);

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOTS = path.join(ROOT, 'test-results', 'console');
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

export interface ConsoleService {
  svc: TestService;
  /** `http://localhost:<port>`: the WebAuthn RP id is `localhost`, so pages open there. */
  origin: string;
  stop(): Promise<void>;
}

/** The whole service with the built console, listening on loopback (see build-setup.ts). */
export async function startConsoleService(opts: TestServiceOptions = {}): Promise<ConsoleService> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const svc = await startTestService({
    ...opts,
    env: {
      PORT: String(port),
      PUBLIC_URL: origin,
      WEBAUTHN_ORIGINS: origin,
      CONSOLE_DIR: CONSOLE_DIST,
      ...opts.env,
    },
  });
  await svc.app.listen({ port, host: '127.0.0.1' });
  return { svc, origin, stop: () => svc.stop() };
}

export interface ConsoleBrowser {
  browser: Browser;
  /** A fresh browser profile (no storage shared with another context). */
  newPage(): Promise<ConsolePage>;
  close(): Promise<void>;
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Content-Security-Policy refusals and uncaught errors of the page. */
  problems: string[];
}

/** Debian's Chromium (never a downloaded browser), one per test file. */
export async function launchBrowser(): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container has no user namespace for Chromium's sandbox; `localhost` is
    // where the service listens (127.0.0.1), whatever the machine's resolver says of ::1.
    args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
  return {
    browser,
    async newPage() {
      // A fixed locale and zone, so dates read the same on every machine.
      const context = await browser.newContext({
        viewport: { width: 1280, height: 900 },
        locale: 'en-US',
        timezoneId: 'UTC',
      });
      const page = await context.newPage();
      // Well within the test's own 30 s, so a failure names the step that waited.
      page.setDefaultTimeout(10_000);
      const problems: string[] = [];
      // A refused API call logs "Failed to load resource" too: that is the page working, so
      // only CSP refusals and uncaught errors count as problems.
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content.Security.Policy/i.test(m.text())) {
          problems.push(m.text());
        }
      });
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      return { page, context, problems };
    },
    close: () => browser.close(),
  };
}

/**
 * A WebAuthn virtual authenticator on this page (CDP): a platform authenticator that keeps
 * discoverable credentials and verifies the user, as a phone or laptop passkey does.
 */
export async function addVirtualAuthenticator(
  page: Page,
): Promise<{ credentialCount(): Promise<number> }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    /** How many passkeys the authenticator holds. */
    credentialCount: async () =>
      (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length,
  };
}

/**
 * An injected EIP-1193 `window.ethereum` (as a wallet extension provides) whose account is
 * a viem account held by the test: the page asks, the test signs.
 */
export async function injectWallet(page: Page, account: LocalAccount): Promise<void> {
  await page.exposeFunction('__onsTestWallet', async (method: string, params: unknown[]) => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address];
      case 'eth_chainId':
        return '0x1';
      case 'personal_sign':
        return account.signMessage({ message: { raw: params[0] as `0x${string}` } });
      default:
        throw new Error(`unsupported method ${method}`);
    }
  });
  await page.addInitScript(() => {
    // Runs in the page (the test's tsconfig has no DOM types: globalThis is the window).
    const w = globalThis as unknown as {
      ethereum: unknown;
      __onsTestWallet: (method: string, params: unknown[]) => Promise<unknown>;
    };
    w.ethereum = {
      request: ({ method, params }: { method: string; params?: unknown[] }) =>
        w.__onsTestWallet(method, params ?? []),
    };
  });
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

/**
 * Saves a screenshot of the page as test-results/console/<name>.png and runs axe-core on
 * it; answers the serious and critical violations (a test expects none).
 */
export async function checkPage(page: Page, name: string): Promise<string[]> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  return axeViolations(page);
}

/** Runs axe-core on the page as it is; answers the serious and critical violations. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's CSP does not apply to axe itself.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const g = globalThis as unknown as {
      document: unknown;
      axe: { run: (ctx: unknown, o: object) => Promise<{ violations: AxeViolation[] }> };
    };
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes)}`);
}

/** Signs in through the console's sign-in page with an email and password. */
export async function signInWithPassword(
  page: Page,
  origin: string,
  email: string,
  password: string,
): Promise<void> {
  await page.goto(`${origin}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The password every console test wallet signs in with. */
export const PASSWORD = 'correct horse battery';

/**
 * A password wallet (`uniqueEmail(label)`) that owns a new organization named `name`
 * (self-signup allowed), made through the API: the client is signed in as that owner.
 */
export async function ownerWithOrganization(
  origin: string,
  label: string,
  name: string,
): Promise<{ email: string; orgId: string; api: ReturnType<typeof createOnsClient> }> {
  const email = uniqueEmail(label);
  const api = createOnsClient({ baseUrl: origin });
  api.setSession(await api.POST('/organizations/wallets', { body: { email, password: PASSWORD } }));
  const { id } = await api.POST('/organizations', {
    body: { name, settings: { allow_self_signup: true } },
  });
  return { email, orgId: id, api };
}
