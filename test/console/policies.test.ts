import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import {
  addVirtualAuthenticator,
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
 * Issue 30 item 5: spend policies in the console. An owner creates, edits and deletes
 * policies and sees each one's use in its window; a member's transfer refused by a policy
 * shows the policy that refused it.
 */
describeWithChromium('console: spend policies', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let owner: ConsolePage;
  let page: Page;
  let orgId = '';
  let ownerEmail = '';

  beforeAll(async () => {
    live = await startConsoleService();
    browser = await launchBrowser();
    const made = await ownerWithOrganization(live.origin, 'policies', 'Policies Org');
    orgId = made.orgId;
    ownerEmail = made.email;
    await made.api.POST('/organizations/switch', { body: { organization_id: orgId } });
    owner = await browser.newPage();
    page = owner.page;
    await signInWithPassword(page, live.origin, made.email, PASSWORD);
    await page.getByText('Policies Org').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('creates, lists with its use, edits and deletes policies', async () => {
    await page.getByRole('link', { name: 'Spend policies' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spend policies' }).waitFor();
    await page.getByText('No policies yet.').waitFor();
    expect(await checkPage(page, 'policies-empty')).toEqual([]);

    // An hourly cap on the whole organization.
    await page.getByLabel('Policy name').fill('hourly cap');
    await page.getByLabel('Applies to').selectOption('organization');
    await page.locator('select[name="period"]').selectOption('hour');
    await page.getByLabel('Most actions per window').fill('5');
    await page.getByRole('button', { name: 'Create policy' }).click();
    const cap = page.locator('tbody tr', { hasText: 'hourly cap' });
    await cap.waitFor();
    expect(await cap.innerText()).toContain('at most 5 actions per hour');
    expect(await cap.innerText()).toContain('0 of 5 actions this hour');
    expect(await cap.innerText()).toContain('Set by an owner: only an owner changes it.');

    // No transfers, anywhere in the organization.
    await page.getByLabel('Policy name').fill('no transfers');
    await page.getByLabel('Applies to').selectOption('organization');
    await page.getByLabel('Denied actions').fill('transfer');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.locator('tbody tr', { hasText: 'no transfers' }).waitFor();
    expect(await checkPage(page, 'policies-list')).toEqual([]);

    // A refusal of the service is shown as its message.
    await page.getByLabel('Policy name').fill('bad');
    await page.getByLabel('Applies to').selectOption('organization');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByText('a policy sets at least one limit').waitFor();

    // Edit: the cap raised.
    await page.getByRole('button', { name: 'Edit hourly cap' }).click();
    await page.getByRole('heading', { name: 'Edit hourly cap' }).waitFor();
    await page.getByLabel('Most actions per window').fill('9');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await cap.getByText('0 of 9 actions this hour').waitFor();

    await page.getByRole('button', { name: 'Delete hourly cap' }).click();
    await page.getByRole('button', { name: 'Delete the policy' }).click();
    await page.locator('tbody tr', { hasText: 'hourly cap' }).waitFor({ state: 'detached' });
    expect(await page.locator('tbody tr', { hasText: 'no transfers' }).count()).toBe(1);
    expect(owner.problems).toEqual([]);
  });

  it("a member's transfer refused by a policy names the policy", async () => {
    const { svc } = live;
    const policies = (
      await svc.container.db.execute<{ id: string }>(
        sql`SELECT id FROM policies WHERE organization_id = ${orgId} AND name = 'no transfers'`,
      )
    ).rows;
    const policyId = policies[0]!.id;

    // A member signs up with a passkey; another member mints an object for it.
    const tab = await browser.newPage();
    const member = tab.page;
    await addVirtualAuthenticator(member);
    await member.goto(`${live.origin}/console/sign-up`);
    await member.getByLabel('Organization to join').fill(orgId);
    await member.getByRole('button', { name: 'Sign up with a passkey' }).click();
    await member.getByRole('heading', { name: 'Overview' }).waitFor();
    await member.getByText('Policies Org').waitFor();
    const stored = await member.evaluate(() =>
      (
        globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }
      ).sessionStorage.getItem('ons.console.session'),
    );
    const { access_token } = JSON.parse(stored!) as { access_token: string };
    const me = await svc.app.inject({
      method: 'GET',
      url: '/wallets/me',
      headers: { authorization: `Bearer ${access_token}` },
    });
    const myAddress = me.json<{ address: string }>().address.toLowerCase();
    const minter = await createSigner(svc, { orgId, role: 'member' });
    await fund(svc, orgId, 10n ** 21n);
    const templateId = await createTemplate(svc, orgId);
    const body = await signEoa(svc, minter, {
      name: 'mint',
      params: { template_id: templateId, owner: myAddress, metadata: { name: 'Blue pass' } },
      nonce: 0,
    });
    const minted = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: minter.headers,
      payload: body,
    });
    expect(minted.statusCode, minted.body).toBe(200);

    await member.getByRole('link', { name: 'Objects', exact: true }).click();
    await member.getByRole('button', { name: 'Transfer Blue pass' }).click();
    await member.getByLabel('New owner’s address (0x…)').fill(minter.address);
    await member.getByRole('button', { name: 'Sign with your passkey and transfer' }).click();
    const alert = member.locator('form.transfer .error');
    await alert.waitFor();
    const text = await alert.innerText();
    expect(text).toContain(policyId);
    expect(text).toContain('no transfers');
    expect(await checkPage(member, 'policies-refused-transfer')).toEqual([]);
  });

  it('a balance below its threshold shows a banner; the balance page says how many actions it pays for', async () => {
    const { svc } = live;
    await svc.container.db.execute(
      sql`UPDATE organizations SET low_balance_wei = ${(10n ** 22n).toString()}::numeric
        WHERE id = ${orgId}`,
    );
    await page.getByRole('link', { name: 'Balance' }).click();
    await page.reload();
    const banner = page.getByTestId('low-balance');
    await banner.waitFor();
    // 1e21 wei funded, less the one mint, at 1.1e15 wei an action.
    const left = ((10n ** 21n - 1_100_000_000_000_000n) / 1_100_000_000_000_000n).toString();
    expect(await banner.innerText()).toContain(`pays for ${left} more actions`);
    await page.getByTestId('actions-left').getByText(`pays for ${left} actions`).waitFor();
    expect(await checkPage(page, 'balance-low')).toEqual([]);
    await svc.container.db.execute(
      sql`UPDATE organizations SET low_balance_wei = NULL WHERE id = ${orgId}`,
    );
    await page.reload();
    await page.getByTestId('actions-left').waitFor();
    expect(await page.getByTestId('low-balance').count()).toBe(0);
  });

  // Last: it moves the service's clock past the sign-in's 10 minutes (docs/policies.md,
  // "Lifting a limit").
  it("asks for a new sign-in to loosen or delete a policy 11 minutes after signing in, in the service's words", async () => {
    live.svc.clock.advance(11 * 60_000);
    await page.getByRole('link', { name: 'Spend policies' }).click();
    const row = page.locator('tbody tr', { hasText: 'no transfers' });
    await row.waitFor();

    // Transfers allowed again, drops denied instead: looser.
    await page.getByRole('button', { name: 'Edit no transfers' }).click();
    await page.getByLabel('Denied actions').fill('drop');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const alert = page.locator('form .error');
    await alert.waitFor();
    expect(await alert.innerText()).toContain(
      "sign in again to loosen a spend policy's denied_actions (a sign-in within the last 10 minutes)",
    );
    await page.getByRole('button', { name: 'Cancel' }).click();

    const remove = async () => {
      await page.getByRole('button', { name: 'Delete no transfers' }).click();
      await page.getByRole('button', { name: 'Delete the policy' }).click();
    };
    await remove();
    await page
      .getByText('sign in again to delete a spend policy (a sign-in within the last 10 minutes)')
      .waitFor();
    expect(await checkPage(page, 'policy-reauthenticate')).toEqual([]);
    expect(await row.innerText()).toContain('never transfer');

    // Signed in again, the same button deletes it.
    await signInWithPassword(page, live.origin, ownerEmail, PASSWORD);
    await page.getByText('Policies Org').waitFor();
    await page.getByRole('link', { name: 'Spend policies' }).click();
    await row.waitFor();
    await remove();
    await row.waitFor({ state: 'detached' });
    expect(owner.problems).toEqual([]);
  });
});
