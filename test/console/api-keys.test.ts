import { createOnsClient, isOnsError } from '@ons/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/identity.js';
import {
  checkPage,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
  type ConsoleService,
  signInWithPassword,
  describeWithChromium,
  PASSWORD,
  ownerWithOrganization,
} from './harness.js';

describeWithChromium('console: API keys', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let secret = '';

  let orgId = '';

  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
    const owner = await ownerWithOrganization(live.origin, 'keys', 'Keys Org');
    const { email, api } = owner;
    orgId = owner.orgId;
    await api.POST('/organizations/switch', { body: { organization_id: orgId } });
    tab = await browser.newPage();
    page = tab.page;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: live.origin,
    });
    await signInWithPassword(page, live.origin, email, PASSWORD);
    await page.getByText('Keys Org').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('creates a key: the secret shown once with a copy button and a warning, then listed with its expiry', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByText('No API keys yet.').waitFor();
    expect(await checkPage(page, 'api-keys')).toEqual([]);

    await page.getByLabel('Name').fill('CI reader');
    await page.getByLabel('Expires after (days, at most 365)').fill('30');
    await page.getByLabel('templates read').check();
    await page.getByLabel('objects read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByTestId('api-key-secret');
    await secretBox.waitFor();
    secret = (await secretBox.innerText()).trim();
    expect(secret).toMatch(/^onsk_/);
    await page.getByText('It is shown only this once').waitFor();
    expect(await checkPage(page, 'api-key-created')).toEqual([]);

    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(
      await page.evaluate(() =>
        (
          globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
        ).navigator.clipboard.readText(),
      ),
    ).toBe(secret);

    // The key works, with the permissions chosen.
    const withKey = createOnsClient({ baseUrl: live.origin, apiKey: secret });
    await withKey.GET('/templates');

    const row = page.locator('tbody tr', { hasText: 'CI reader' });
    await row.waitFor();
    expect(await row.innerText()).toContain('templates: read');
    expect(await row.innerText()).toContain('never');
    const expires = new Date(Date.now() + 30 * 24 * 3600 * 1000).toLocaleDateString('en-US', {
      timeZone: 'UTC',
    });
    expect(await row.innerText()).toContain(expires);

    await page.getByRole('button', { name: 'I have saved it' }).click();
    await secretBox.waitFor({ state: 'detached' });
    await page.reload();
    await row.waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(tab.problems).toEqual([]);
  });

  it('shows a refused create as its message and field', async () => {
    await page.getByLabel('Name').fill('   ');
    await page.getByLabel('objects read').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('name');
    expect(await alert.innerText()).not.toContain('{');
    await checkPage(page, 'api-key-error');
  });

  it('deletes a key, which then stops working', async () => {
    await page.reload();
    const row = page.locator('tbody tr', { hasText: 'CI reader' });
    await row.waitFor();
    expect(secret).toMatch(/^onsk_/);
    await page.getByRole('button', { name: 'Delete CI reader' }).click();
    await page.getByText('Delete the key CI reader?').waitFor();
    await page.getByRole('button', { name: 'Delete the key' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText('The key CI reader is deleted').waitFor();
    await page.getByText('No API keys yet.').waitFor();
    const withKey = createOnsClient({ baseUrl: live.origin, apiKey: secret });
    const refused = await withKey.GET('/templates').catch((e: unknown) => e);
    expect(isOnsError(refused) && refused.status).toBe(401);
    expect(tab.problems).toEqual([]);
  });

  it("offers a member without the permission no API keys; by address, the service's refusal and no form", async () => {
    const email = uniqueEmail('member');
    // Joins Keys Org as a plain member (self sign-up): members may not read API keys.
    await createOnsClient({ baseUrl: live.origin }).POST('/organizations/wallets', {
      body: { email, password: PASSWORD, organization_id: orgId },
    });
    const member = await browser.newPage();
    await member.page.goto(`${live.origin}/console/sign-in`);
    await member.page.getByLabel('Email').fill(email);
    await member.page.getByLabel('Password').fill(PASSWORD);
    await member.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await member.page.getByText('Keys Org').waitFor();
    await member.page.getByRole('link', { name: 'Objects' }).waitFor();
    expect(await member.page.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    await member.page.goto(`${live.origin}/console/api-keys`);
    const alert = member.page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.innerText()).trim();
    expect(text).toMatch(/permission|api-keys/i);
    expect(text).not.toContain('{');
    await checkPage(member.page, 'api-keys-refused');

    // No form it could not use; the service refuses the create itself (403 code 7).
    expect(await member.page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    const api = createOnsClient({ baseUrl: live.origin });
    api.setSession(await api.POST('/auth/login', { body: { email, password: PASSWORD } }));
    const refused = await api
      .POST('/api-keys', {
        body: {
          name: 'not allowed',
          permissions: [{ resource: 'templates', crud: { read: true } }],
        },
      })
      .catch((e: unknown) => e);
    expect(isOnsError(refused) && refused.status).toBe(403);
    expect(member.problems).toEqual([]);
    await member.context.close();
  });
});
