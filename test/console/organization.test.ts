import { createOnsClient } from '@ons/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { uniqueEmail } from '../helpers/identity.js';
import { deposit, randomTxHash } from '../helpers/orgs.js';
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
} from './harness.js';

describeWithChromium('console: organization, members, balance', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let email: string;
  let acmeId: string;

  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
    email = uniqueEmail('owner');
    await createOnsClient({ baseUrl: live.origin }).POST('/organizations/wallets', {
      body: { email, password: PASSWORD, name: 'Olive Owner' },
    });
    tab = await browser.newPage();
    page = tab.page;
    await signInWithPassword(page, live.origin, email, PASSWORD);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  /** The id shown on the organization page for the current organization. */
  const currentOrgId = async () =>
    (await page.locator('.card dl.facts dd code').first().innerText()).trim();

  it('creates organizations, acts in the new one, and switches back', async () => {
    await page.getByRole('link', { name: 'Organization' }).click();
    await page.getByRole('heading', { name: 'Organization', exact: true }).waitFor();
    await page.getByText('You belong to no organization yet.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Acme' }).waitFor();
    acmeId = await currentOrgId();
    expect(acmeId).toMatch(/^org_/);

    await page.getByLabel('Name', { exact: true }).fill('Beta');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Beta' }).waitFor();
    expect(await currentOrgId()).not.toBe(acmeId);
    expect(await checkPage(page, 'organization')).toEqual([]);

    await page.getByRole('button', { name: 'Switch to Acme' }).click();
    await page.getByRole('heading', { name: 'Acme' }).waitFor();
    expect(await currentOrgId()).toBe(acmeId);
    await page.getByRole('button', { name: 'Switch to Beta' }).waitFor();
  });

  it('invites a member, changes the role, removes it, and shows a refused change as its message', async () => {
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    const invitee = uniqueEmail('invitee');
    await page.getByLabel('Email').fill(invitee);
    await page.locator('select[name="invite-role"]').selectOption('admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`Invitation sent to ${invitee}`).waitFor();
    const row = page.locator('tbody tr', { hasText: invitee });
    await row.waitFor();
    expect(await row.innerText()).toContain('invited');
    expect(await page.getByLabel(`Role of ${invitee}`).inputValue()).toBe('admin');
    expect(await checkPage(page, 'members')).toEqual([]);

    // A role change is asked first; Cancel changes nothing.
    await page.getByLabel(`Role of ${invitee}`).selectOption('viewer');
    await page.getByText(`Change the role of ${invitee} from admin to viewer?`).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.getByLabel(`Role of ${invitee}`).inputValue()).toBe('admin');
    await page.getByLabel(`Role of ${invitee}`).selectOption('viewer');
    await page.getByRole('button', { name: 'Change the role' }).click();
    await page.getByText(`${invitee} is now viewer.`).waitFor();
    const api = createOnsClient({ baseUrl: live.origin });
    api.setSession(await api.POST('/auth/login', { body: { email, password: PASSWORD } }));
    await expect
      .poll(async () => {
        const { members } = await api.GET('/organizations/{organizationId}/members', {
          params: { path: { organizationId: acmeId } },
        });
        return members.find((m) => m.email === invitee)?.role;
      })
      .toBe('viewer');

    // The last owner cannot demote themselves: the service's refusal is shown as its message.
    await page.getByLabel('Role of Olive Owner').selectOption('viewer');
    await page.getByRole('button', { name: 'Change the role' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/owner/i);
    expect(await alert.innerText()).not.toContain('{');
    await checkPage(page, 'members-error');

    await page.getByRole('button', { name: `Remove ${invitee}` }).click();
    await page.getByRole('button', { name: 'Remove the member' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByText(`${invitee} is removed from the organization.`).waitFor();
    expect(tab.problems).toEqual([]);
  });

  it('shows the balance, a chart of its history and the deposits', async () => {
    const first = randomTxHash();
    await deposit(live.svc, acmeId, '12.5', first);
    await deposit(live.svc, acmeId, '7.5');
    await page.getByRole('link', { name: 'Balance' }).click();
    await page.getByRole('heading', { name: 'Balance', exact: true }).waitFor();
    await page.getByText('20 ONS').waitFor();
    await page.locator('.chart canvas').waitFor();
    await page.getByRole('img', { name: /Balance over the last month/ }).waitFor();
    const deposits = page.locator('tbody tr', { hasText: '0x' });
    await expect.poll(() => deposits.count()).toBe(2);
    await page.getByText(first).waitFor();
    await page.getByText('12.5', { exact: true }).waitFor();
    expect(await checkPage(page, 'balance')).toEqual([]);
    // uPlot's stylesheet ships as a file and its drawing goes through the CSSOM: no refusals.
    expect(tab.problems).toEqual([]);
  });
});
