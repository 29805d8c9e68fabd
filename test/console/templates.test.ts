import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  checkPage,
  describeWithChromium,
  launchBrowser,
  ownerWithOrganization,
  PASSWORD,
  signInWithPassword,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
  type ConsoleService,
} from './harness.js';

/**
 * Issue 32 item 1: templates in the console — create one (custom_schema checked as it is
 * typed), edit it, and list its versions.
 */
describeWithChromium('console: templates', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;

  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
    const { email } = await ownerWithOrganization(live.origin, 'templates', 'Template Org');
    tab = await browser.newPage();
    await signInWithPassword(tab.page, live.origin, email, PASSWORD);
    await tab.page.getByRole('heading', { name: 'Overview' }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('creates a template with a checked custom_schema, edits it, and lists its versions', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.getByRole('heading', { name: 'Templates', exact: true }).waitFor();
    await page.getByText('No templates yet').waitFor();
    await page.getByRole('button', { name: 'New template' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Concert ticket');
    await page.getByLabel('Face 1 image URL').fill('https://example.com/ticket.png');
    const schema = page.getByLabel(/custom_schema/);
    const create = page.getByRole('button', { name: 'Create the template' });
    // Feedback as it is typed: not JSON, not an object's schema, then right.
    await schema.fill('{"type": "object", ');
    await page.getByText(/^Not JSON/).waitFor();
    expect(await create.isDisabled()).toBe(true);
    await schema.fill('{"type": "string"}');
    await page.getByText('the schema’s "type" must be "object"').waitFor();
    await schema.fill('{"type": "object", "properties": {"seat": {"type": "string"}}}');
    await page.getByText('The schema is valid JSON').waitFor();
    await page.getByLabel('drop', { exact: true }).check();
    expect(await checkPage(page, 'templates-new')).toEqual([]);
    await create.click();
    await page.getByText('Template created.').waitFor();
    const row = page.getByTestId('templates').locator('tbody tr');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.innerText()).toContain('mint, transfer, update, redeem, drop');
    expect(await row.innerText()).toContain('public');

    await page.getByRole('button', { name: 'Edit Concert ticket' }).click();
    const versions = page.getByTestId('versions').locator('tbody tr');
    await expect.poll(() => versions.count()).toBe(1);
    await page.getByLabel('Name', { exact: true }).fill('Concert ticket, gold');
    await page.getByLabel('Face 1 image URL').fill('https://example.com/gold.png');
    await page.getByLabel(/Public \(anyone/).uncheck();
    await page.getByRole('button', { name: 'Save the template' }).click();
    await page.getByText('Saved.').waitFor();
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.first().innerText()).toContain('Concert ticket, gold');
    await expect.poll(() => row.innerText()).toContain('private');
    expect(await checkPage(page, 'templates-edit')).toEqual([]);

    // A schema the service cannot compile: its message, as words.
    await page.getByLabel(/custom_schema/).fill('{"type": "object", "properties": 5}');
    await page.getByRole('button', { name: 'Save the template' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).not.toContain('{"code"');
    expect(tab.problems).toEqual([]);
  });
});
