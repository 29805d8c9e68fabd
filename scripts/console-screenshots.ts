/**
 * Screenshots of the console's main pages for docs/console.md, into docs/images/console-*.png.
 *
 *   npx tsx scripts/console-screenshots.ts
 *
 * Starts the whole service in this process on a fresh embedded PostgreSQL (a temporary
 * DATA_DIR, removed at the end) with the built console (built first when missing or older
 * than its sources), seeds a realistic organization through the API — a crypto-wallet
 * owner, deposits, two templates (one with an uploaded image face), objects and actions on
 * them, sealed batches, two webhooks (one whose receiver fails), an API key and spend
 * policies — then drives Debian's Chromium (/usr/bin/chromium) at 1280×800 through the
 * pages. Deposits come from the chain in production; here they are credited in the
 * database, as the tests do.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { chromium, type Page } from 'playwright-core';
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createOnsClient, type ActionName, type OnsClient } from '@ons/sdk';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open.js';
import { createLogger } from '../src/http/logger.js';
import { FakeClock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { createService, type Service } from '../src/server.js';
import buildConsole, { CHROMIUM, CONSOLE_DIST } from '../test/console/build-setup.js';
import { makeTestCa, startReceiver } from '../test/helpers/webhook-receiver.js';
import { freePort } from '../test/helpers/processes.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = path.join(ROOT, 'docs', 'images');
const VIEWPORT = { width: 1280, height: 800 };
/** docs/ stays light: a screenshot larger than this is reported. */
const MAX_BYTES = 150 * 1024;
const ONS = 10n ** 18n;
const DAY = 24 * 3_600_000;

/** A session for the wallet of `account` (Sign-In with Ethereum: creates it the first time). */
async function connect(api: OnsClient, account: LocalAccount): Promise<void> {
  const challenge = await api.GET('/wallets/connect/eoa/challenge', {
    params: { query: { address: account.address } },
  });
  const signature = await account.signMessage({ message: challenge.message });
  api.setSession(
    await api.POST('/wallets/connect/eoa', { body: { message: challenge.message, signature } }),
  );
}

/** A deposit credited at `at` (from the chain in production): ledger row and balance. */
async function deposit(svc: Service, orgId: string, wei: bigint, at: Date): Promise<void> {
  await svc.container.db.execute(sql`
    WITH credited AS (
      UPDATE organizations SET balance_wei = balance_wei + ${wei.toString()}::numeric
      WHERE id = ${orgId} RETURNING balance_wei)
    INSERT INTO ledger_entries (id, organization_id, kind, amount_wei, balance_after_wei, created_at)
    SELECT ${newId('ledger')}, ${orgId}, 'deposit', ${wei.toString()}::numeric, balance_wei, ${at}
    FROM credited`);
}

/** A ticket picture, drawn by the browser, for the template's image face. */
async function ticketImage(page: Page): Promise<Buffer> {
  await page.setContent(`<div id="t" style="width:480px;height:240px;border-radius:18px;
    background:linear-gradient(135deg,#0b3d91,#1f7a8c);color:#fff;font:600 28px sans-serif;
    display:flex;flex-direction:column;justify-content:center;padding:0 36px;box-sizing:border-box">
    <div style="font-size:16px;letter-spacing:4px;opacity:.8">HARBOUR HALL</div>
    <div style="margin:10px 0">Spring Concert 2026</div>
    <div style="font-size:18px;font-weight:400">Admit one · Doors 19:00</div></div>`);
  return page.locator('#t').screenshot({ type: 'png' });
}

async function main() {
  if (!statSync(CHROMIUM, { throwIfNoEntry: false })) {
    throw new Error(`Chromium is needed at ${CHROMIUM}`);
  }
  buildConsole();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ons-screens-'));
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const ca = await makeTestCa();
  const config = loadConfig({
    PORT: String(port),
    DATA_DIR: dataDir,
    NETWORK_ID: 'ons-demo',
    LOG_LEVEL: 'error',
    PUBLIC_URL: origin,
    WEBAUTHN_ORIGINS: origin,
    CONSOLE_DIR: CONSOLE_DIST,
    RATE_LIMIT_ENABLED: 'false',
    PUBLIC_LIST_CACHE_MS: '0',
    BATCH_PROVE_DELAY_MS: '0',
    BATCH_MAX_ACTIONS: '4',
    // A round fee (0.01 ONS an action): the proving cost is left out of it here.
    FEE_FIXED_WEI: '10000000000000000',
    FEE_PROVING_COST_PER_BATCH_WEI: '0',
    BATCH_MAX_SECONDS: '30',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_CA_FILE: ca.caFile,
    // Deliveries are made below, once, when the seed says so.
    WEBHOOK_DELIVERY: 'false',
  });
  const opened = await openDatabase(config);
  const clock = new FakeClock(new Date());
  const svc = await createService({
    config,
    database: opened.database,
    clock,
    logger: createLogger('error'),
  });
  await svc.app.listen({ port, host: '127.0.0.1' });
  const fulfilment = await startReceiver(ca, () => ({ status: 200 }));
  const analytics = await startReceiver(ca, () => ({ status: 503 }));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
  try {
    const owner = privateKeyToAccount(generatePrivateKey());
    const api = createOnsClient({ baseUrl: origin });
    // The organization is three weeks old, so the balance has a history to chart.
    const now = clock.now().getTime();
    clock.set(new Date(now - 21 * DAY));
    await connect(api, owner);
    const org = await api.POST('/organizations', { body: { name: 'Harbour Tickets' } });
    clock.set(new Date(now));
    // A new session, today, acts in the organization just made (its default).
    await connect(api, owner);
    await deposit(svc, org.id, 25n * ONS, new Date(now - 20 * DAY));
    await deposit(svc, org.id, 40n * ONS, new Date(now - 9 * DAY));
    await deposit(svc, org.id, 15n * ONS, new Date(now - 2 * DAY));

    const context = await browser.newContext({
      viewport: VIEWPORT,
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    const drawing = await context.newPage();
    const picture = await api.upload(
      new Blob([await ticketImage(drawing)], { type: 'image/png' }),
      { filename: 'concert-ticket.png', isPublic: true },
    );
    await drawing.close();
    const concert = await api.POST('/templates', {
      body: {
        name: 'Concert ticket',
        description: 'Seated tickets for the spring season at Harbour Hall',
        category: 'tickets',
        faces: [
          { id: 'front', url: picture.url, config: {}, content: '' },
          { id: 'back', url: '', config: {}, content: 'Admit one. Doors open at 19:00.' },
        ],
        actions: ['mint', 'transfer', 'update', 'redeem', 'drop', 'pickup'],
        custom_schema: {
          type: 'object',
          properties: { seat: { type: 'string' }, row: { type: 'string' } },
        },
        is_public: true,
      },
    });
    const pass = await api.POST('/templates', {
      body: {
        name: 'Museum pass',
        description: 'Annual passes, kept private',
        category: 'passes',
        faces: [{ id: 'card', url: '', config: {}, content: 'Harbour Museum · annual pass' }],
        actions: ['mint', 'transfer', 'redeem'],
        is_public: false,
      },
    });
    const rules = [{ template_id: concert.id }];
    await api.POST('/webhooks', {
      body: { url: fulfilment.url, description: 'Fulfilment', rules },
    });
    // Only resales and drops go to analytics, whose endpoint is down: they stay open.
    await api.POST('/webhooks', {
      body: {
        url: analytics.url,
        description: 'Analytics warehouse',
        rules: [{ template_id: concert.id, actions: ['transfer', 'drop'] }],
      },
    });
    await api.POST('/api-keys', {
      body: {
        name: 'Minting backend',
        ttl_hours: 24 * 90,
        permissions: [
          {
            resource: 'templates',
            crud: { read: true, create: false, update: false, delete: false },
          },
          {
            resource: 'objects',
            crud: { read: true, create: false, update: false, delete: false },
          },
          { resource: 'actions', crud: { read: true, create: true, update: false, delete: false } },
        ],
      },
    });
    await api.POST('/policies', {
      body: {
        target_type: 'organization',
        name: 'Monthly budget',
        period: '30d',
        spend_cap_wei: (50n * ONS).toString(),
      },
    });
    await api.POST('/policies', {
      body: {
        target_type: 'template',
        target_id: pass.id,
        name: 'Passes are never dropped',
        allowed_actions: ['mint', 'transfer', 'redeem'],
      },
    });

    const act = async (name: ActionName, params: Record<string, unknown>) => {
      const { object } = await api.actions.signAndExecute({ name, params, signer: owner });
      clock.advance(7_000);
      return object.id;
    };
    const mint = (name: string, custom: Record<string, unknown>, template = concert.id) =>
      act('mint', { template_id: template, metadata: { name }, custom });
    const frontRow = await mint('Front row A1', { row: 'A', seat: '1' });
    const a2 = await mint('Front row A2', { row: 'A', seat: '2' });
    const balcony = await mint('Balcony C7', { row: 'C', seat: '7' });
    await act('update', { object_id: frontRow, custom: { row: 'A', seat: '1', vip: true } });
    await act('transfer', {
      object_id: a2,
      to: privateKeyToAccount(generatePrivateKey()).address.toLowerCase(),
    });
    await act('drop', {
      object_id: balcony,
      location: { latitude: 53.5461, longitude: 9.9665 },
    });
    await mint('Annual pass · J. Rivera', {}, pass.id);
    await mint('Stalls F12', { row: 'F', seat: '12' });
    await mint('Stalls F13', { row: 'F', seat: '13' });
    // Seal what is full, then (after the batch's time) what is left but the newest.
    const settle = async () => {
      for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
    };
    await settle();
    clock.advance(31_000);
    await settle();
    await mint('Stalls F14', { row: 'F', seat: '14' });
    await svc.container.webhookWorker.runOnce();
    const firstBatch = (
      await api.GET('/ebus/action-logs', { params: { query: { object_id: frontRow, limit: 5 } } })
    ).action_logs.at(-1)?.batch_id;
    if (!firstBatch) throw new Error('the first mint was not sealed into a batch');

    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // The owner's crypto wallet, as a wallet extension injects it.
    await page.exposeFunction('__onsWallet', async (method: string, params: unknown[]) => {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [owner.address];
      if (method === 'eth_chainId') return '0x1';
      if (method === 'personal_sign') {
        return owner.signMessage({ message: { raw: params[0] as `0x${string}` } });
      }
      throw new Error(`unsupported method ${method}`);
    });
    // A string, not a function: tsx would wrap a function's names in a helper the page lacks.
    await page.addInitScript(`window.ethereum = {
      request: ({ method, params }) => window.__onsWallet(method, params ?? []),
    };`);

    mkdirSync(OUT, { recursive: true });
    const sizes: string[] = [];
    type Clip = { x: number; y: number; width: number; height: number };
    const shot = async (name: string, opts: { clip?: Clip } = {}) => {
      // Nothing still loading, then the web fonts and images settled.
      for (let i = 0; i < 200 && (await page.locator('.progress').count()) > 0; i++) {
        await page.waitForTimeout(50);
      }
      await page.waitForLoadState('networkidle');
      const file = path.join(OUT, `console-${name}.png`);
      await page.screenshot(
        opts.clip ? { path: file, fullPage: true, clip: opts.clip } : { path: file },
      );
      const bytes = statSync(file).size;
      sizes.push(`${path.relative(ROOT, file)} ${Math.round(bytes / 1024)} KB`);
      if (bytes > MAX_BYTES) console.warn(`${file} is ${bytes} bytes (over ${MAX_BYTES})`);
    };
    const open = async (address: string, heading: string | RegExp) => {
      await page.goto(`${origin}/console${address}`);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
    };

    /** Scrolls the page so this section's heading is at the top. */
    const scrollTo = async (heading: string) => {
      const box = await page
        .getByRole('heading', { name: heading, exact: true, level: 2 })
        .boundingBox();
      if (!box) throw new Error(`no heading ${heading}`);
      await page.evaluate(`window.scrollTo(0, ${Math.round(box.y) - 16})`);
    };

    await open('/sign-in', 'Sign in');
    await shot('sign-in');
    await page.getByRole('button', { name: 'Sign in with a crypto wallet' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByTestId('open-deliveries').locator('tbody tr').first().waitFor();
    // The whole dashboard (its lower parts are what it is for) under the navigation, which
    // every other picture shows: so the taller picture stays light.
    const main = await page.locator('main').boundingBox();
    if (!main) throw new Error('the dashboard has no main element');
    await shot('dashboard', {
      clip: { x: 0, y: main.y, width: VIEWPORT.width, height: main.height },
    });
    await open('/templates', 'Templates');
    await page.getByText('Museum pass').first().waitFor();
    await shot('templates');
    await open('/objects', 'Objects');
    await page.getByRole('link', { name: 'Open Stalls F14' }).waitFor();
    await scrollTo('Objects');
    await shot('objects');
    await open(`/objects/${frontRow}`, 'Front row A1');
    await page.getByTestId('object-history').locator('tbody tr').nth(1).waitFor();
    await shot('object');
    await open('/explorer', 'Explorer');
    await page
      .getByRole('link', { name: /^Batch \d+$/ })
      .first()
      .waitFor();
    await scrollTo('A public object and its history');
    await shot('explorer');
    await open(`/explorer/batches/${firstBatch}`, /^Batch \d+$/);
    await page.getByRole('button', { name: 'Verify in the browser' }).click();
    await page
      .getByTestId('verdict')
      .getByText(/^Verified/)
      .waitFor();
    await shot('batch-verified');
    await open('/api-keys', 'API keys');
    await page.getByText('Minting backend').first().waitFor();
    await shot('api-keys');
    await open('/webhooks', 'Webhooks');
    await page.getByText('Analytics warehouse').first().waitFor();
    await shot('webhooks');
    await open('/policies', /policies/i);
    await page.getByText('Monthly budget').first().waitFor();
    await shot('policies');
    await open('/balance', 'Balance');
    await page.locator('.chart').first().waitFor();
    await shot('balance');
    console.log(sizes.join('\n'));
  } finally {
    await browser.close();
    await fulfilment.close();
    await analytics.close();
    await svc.close();
    await opened.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
