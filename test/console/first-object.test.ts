import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { fund } from '../helpers/ebus.js';
import {
  addVirtualAuthenticator,
  checkPage,
  describeWithChromium,
  injectWallet,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsoleService,
} from './harness.js';

/**
 * Issue 32 items 2 and 3: a newcomer's first hour in the browser alone — passkey sign-up
 * (no organization id), an organization, funds, a template, a first minted object — then
 * acting on it with the passkey and with a linked crypto wallet, each showing the fee before
 * signing and the charge after, and the object page with its history and batch.
 */
describeWithChromium('console: the first object', () => {
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

  it('signs up, makes an organization and a template, mints, and acts on the object', async () => {
    const started = Date.now();
    const tab = await browser.newPage();
    const { page } = tab;
    const linked = privateKeyToAccount(generatePrivateKey());
    await injectWallet(page, linked);
    await addVirtualAuthenticator(page);
    await page.goto(`${live.origin}/console/sign-up`);
    await page.getByRole('button', { name: 'Sign up with a passkey' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const checklist = page.getByTestId('checklist');
    await checklist.getByText('○ An organization — create one').waitFor();

    await checklist.getByRole('link', { name: 'create one' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('First Hour Tickets');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'First Hour Tickets' }).waitFor();
    // Funds arrive from outside the console (a deposit on chain): the test credits them.
    const { rows } = await live.svc.container.db.execute<{ id: string }>(
      sql`SELECT id FROM organizations WHERE name = 'First Hour Tickets'`,
    );
    await fund(live.svc, rows[0]!.id, 10n ** 19n);

    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Ticket');
    await page.getByLabel('Face 1 text').fill('Admit one');
    await page.getByLabel('drop', { exact: true }).check();
    await page.getByRole('button', { name: 'Create the template' }).click();
    await page.getByRole('link', { name: 'mint an object from it' }).click();

    const mint = page.getByRole('form', { name: 'Mint an object' });
    await mint.getByLabel('Name (optional)').fill('Front row');
    await mint.getByLabel(/custom/).fill('{"seat": "1A"}');
    await mint
      .getByTestId('fee-quote')
      .filter({ hasText: /^Fee: / })
      .waitFor();
    expect(await checkPage(page, 'objects-mint')).toEqual([]);
    await mint.getByRole('button', { name: 'Sign and mint' }).click();
    await page.getByRole('heading', { name: 'Front row' }).waitFor();
    const seconds = (Date.now() - started) / 1000;
    console.log(`first minted object ${seconds.toFixed(1)} s after opening the sign-up page`);
    expect(seconds).toBeLessThan(60);
    const history = page.getByTestId('object-history').locator('tbody tr');
    await expect.poll(() => history.count()).toBe(1);
    expect(await history.first().innerText()).toContain('mint');
    expect(await checkPage(page, 'object')).toEqual([]);

    // Update with the passkey: the fee before, the charge after.
    const update = page.getByRole('form', { name: 'Update' });
    await update.getByLabel(/New custom/).fill('{"seat": "2B"}');
    await update.getByRole('button', { name: 'Sign and update' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Updated\. Charged [\d.]+ ONS\./ })
      .waitFor();
    await expect.poll(() => page.locator('dl.facts').innerText()).toContain('"2B"');

    // Drop with the crypto wallet linked to this wallet.
    const walletId = (
      await live.svc.container.db.execute<{ wallet_id: string }>(
        sql`SELECT wallet_id FROM credentials WHERE type = 'passkey' ORDER BY created_at DESC LIMIT 1`,
      )
    ).rows[0]!.wallet_id;
    await live.svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, created_at)
      VALUES (${newId('credential')}, ${walletId}, 'eoa', ${linked.address.toLowerCase()},
        ${live.svc.clock.now()})`);
    const drop = page.getByRole('form', { name: 'Drop' });
    await drop.getByLabel('Latitude').fill('52.52');
    await drop.getByLabel('Longitude').fill('13.405');
    await drop.getByLabel(/your crypto wallet/).check();
    await drop.getByRole('button', { name: 'Sign and drop' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Dropped\. Charged/ })
      .waitFor();
    await expect.poll(() => history.count()).toBe(3);
    expect(await history.first().innerText()).toContain('crypto wallet');

    // A dropped object can only be picked up: the page offers no redeem.
    expect(await page.getByRole('form', { name: 'Redeem' }).count()).toBe(0);
    // The overview's checklist ticked itself; the balance says how many actions it pays for.
    await page.getByRole('link', { name: 'Overview' }).click();
    await checklist.getByText('✓ A first object').waitFor();
    for (const step of ['An organization', 'Funds for fees', 'A template']) {
      await checklist.getByText(`✓ ${step}`).waitFor();
    }
    await checklist.getByText('○ A webhook — add one').waitFor();
    expect(await page.getByTestId('balance-summary').innerText()).toMatch(
      /enough for \d+ actions at today’s fee/,
    );
    expect(await checkPage(page, 'overview-checklist')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });
});
