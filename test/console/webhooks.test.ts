import { createOnsClient } from '@ons/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { uniqueEmail } from '../helpers/identity.js';
import { makeTestCa, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
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

/**
 * Issue 19 item 5: webhooks in the console, delivering to a real HTTPS receiver (a test CA,
 * loopback allowed) that answers 410 (the delivery is `stopped` at once) and then 200.
 */
describeWithChromium('console: webhooks', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let receiver: Receiver;
  let signer: EoaSigner;
  let templateId = '';
  let publicTemplateId = '';
  let orgId = '';
  let firstKey = '';
  let ownerEmail = '';
  let nonce = 0;

  const mint = async () => {
    const { svc } = live;
    const body = await signEoa(svc, signer, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: nonce++,
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: signer.headers,
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(res.body);
    await svc.container.webhookWorker.runOnce();
  };

  beforeAll(async () => {
    const ca = await makeTestCa();
    live = await startConsoleService({
      env: {
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_CA_FILE: ca.caFile,
        // Deliveries are made by the test (runOnce), when it chooses.
        WEBHOOK_DELIVERY: 'false',
      },
    });
    const { svc } = live;
    receiver = await startReceiver(ca, () => ({ status: 410 }));
    const owner = await ownerWithOrganization(live.origin, 'hooks', 'Hooks Org');
    const { email } = owner;
    ownerEmail = email;
    orgId = owner.orgId;
    signer = await createSigner(svc, { orgId });
    await fund(svc, orgId, 10n ** 21n);
    templateId = await createTemplate(svc, orgId, { isPublic: false });
    // Another organization's public template, with a public object (so it is listed).
    const other = await createSigner(svc);
    await fund(svc, other.orgId, 10n ** 21n);
    publicTemplateId = await createTemplate(svc, other.orgId, { isPublic: true });
    const body = await signEoa(svc, other, {
      name: 'mint',
      params: { template_id: publicTemplateId },
      nonce: 0,
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: other.headers,
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(res.body);

    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: live.origin,
    });
    await signInWithPassword(page, live.origin, email, PASSWORD);
    await page.getByText('Hooks Org').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  it('creates a webhook with a rule from the template picker: the signing key shown once', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet.').waitFor();
    const picker = page.getByLabel('Template (rule 1)');
    // The organization's template and another organization's public one are offered.
    await picker.locator(`option[value="${publicTemplateId}"]`).waitFor({ state: 'attached' });
    await picker.locator(`option[value="${templateId}"]`).waitFor({ state: 'attached' });
    expect(await checkPage(page, 'webhooks')).toEqual([]);

    await page.getByLabel('Endpoint URL (https)').fill(receiver.url);
    await page.getByLabel('Description (optional)').fill('orders');
    await picker.selectOption(templateId);
    await page.getByLabel('Rule 1 action mint').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const keyBox = page.getByTestId('webhook-signing-key');
    await keyBox.waitFor();
    firstKey = (await keyBox.innerText()).trim();
    expect(firstKey).toMatch(/^[0-9a-f]{32,}$/);
    await page.getByText('It is shown only this once').waitFor();
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await checkPage(page, 'webhook-created')).toEqual([]);

    const row = page.locator('tbody tr', { hasText: receiver.url });
    await row.waitFor();
    expect(await row.innerText()).toContain('orders');
    expect(await row.innerText()).toContain('active');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await keyBox.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(firstKey);
    expect(tab.problems).toEqual([]);
  });

  it('shows a refused webhook as its message and field', async () => {
    await page.getByLabel('Endpoint URL (https)').fill('http://hooks.example.com/ons');
    await page.getByLabel('Template (rule 1)').selectOption(templateId);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const alert = page.locator('form .error');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('url');
    expect(await alert.innerText()).not.toContain('{');
    expect(await checkPage(page, 'webhook-refused')).toEqual([]);
  });

  it('shows the delivery log with attempts, filters it, and redelivers a stopped delivery', async () => {
    await page.reload();
    await page.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('heading', { name: 'Webhook', exact: true }).waitFor();
    await page.getByText('No deliveries.').waitFor();
    await mint();
    expect(receiver.received).toHaveLength(1);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const log = page.getByTestId('deliveries');
    await log.waitFor();
    const row = log.locator('tbody tr').first();
    expect(await row.innerText()).toContain('stopped');
    expect(await row.innerText()).toMatch(/410, \d+ ms/);

    await page.getByLabel('Status').selectOption('done');
    await page.getByText('No deliveries.').waitFor();
    await page.getByLabel('Status').selectOption('stopped');
    await log.waitFor();
    expect(await checkPage(page, 'webhook-deliveries')).toEqual([]);

    receiver.answer = () => ({ status: 200 });
    await page.getByRole('button', { name: /^Redeliver / }).click();
    await page.getByText(/is queued again/).waitFor();
    await live.svc.container.webhookWorker.runOnce();
    expect(receiver.received).toHaveLength(2);
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await log.locator('tbody tr', { hasText: 'done' }).waitFor();
    // The status change and the refresh each load the list, which is empty while a load runs:
    // poll until the last load's two attempts are shown, the second answered 200.
    const attempts = log.locator('ol.attempts li');
    await expect
      .poll(async () => {
        const texts = await attempts.allInnerTexts();
        return texts.length === 2 && texts.join('\n').includes('200');
      })
      .toBe(true);
    expect(await page.getByRole('button', { name: /^Redeliver / }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
  });

  it('edits the url, description and rules', async () => {
    await page.getByLabel('Description (optional)').fill('orders and tickets');
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Template (rule 2)').selectOption(publicTemplateId);
    await page
      .getByLabel('Signer addresses (rule 2; one per line, empty: every signer)')
      .fill(signer.address);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const hookId = (await page.locator('dl code').first().innerText()).trim();
    const api = createOnsClient({ baseUrl: live.origin });
    const saved = await api.GET('/webhooks/{webhookId}', {
      params: { path: { webhookId: hookId } },
      headers: signer.headers,
    });
    expect(saved.description).toBe('orders and tickets');
    expect(saved.rules).toEqual([
      { template_id: templateId, actions: ['mint'], addresses: [] },
      { template_id: publicTemplateId, actions: [], addresses: [signer.address.toLowerCase()] },
    ]);
    expect(tab.problems).toEqual([]);
  });

  it('rotates the signing key: a new key shown once', async () => {
    await page.getByRole('button', { name: 'Rotate the signing key' }).click();
    await page.getByRole('button', { name: 'Rotate the key' }).click();
    const keyBox = page.getByTestId('webhook-signing-key');
    await keyBox.waitFor();
    const second = (await keyBox.innerText()).trim();
    expect(second).toMatch(/^[0-9a-f]{32,}$/);
    expect(second).not.toBe(firstKey);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await keyBox.waitFor({ state: 'detached' });
  });

  it('re-activates a webhook the service switched off', async () => {
    receiver.answer = () => ({ status: 410 });
    for (let i = 0; i < 3; i++) await mint();
    await page.reload();
    await page.getByTestId('webhook-state').waitFor();
    expect(await page.getByTestId('webhook-state').innerText()).toBe('inactive');
    await page.getByText('This webhook is inactive').waitFor();
    expect(await checkPage(page, 'webhook-inactive')).toEqual([]);
    await page.getByRole('button', { name: 'Re-activate' }).click();
    await page.getByTestId('webhook-state').getByText('active', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Re-activate' }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
  });

  it("offers a member without webhook permissions no webhooks; by address, the service's refusal", async () => {
    const email = uniqueEmail('hook-member');
    await createOnsClient({ baseUrl: live.origin }).POST('/organizations/wallets', {
      body: { email, password: PASSWORD, organization_id: orgId },
    });
    const member = await browser.newPage();
    await member.page.goto(`${live.origin}/console/sign-in`);
    await member.page.getByLabel('Email').fill(email);
    await member.page.getByLabel('Password').fill(PASSWORD);
    await member.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await member.page.getByText('Hooks Org').waitFor();
    await member.page.getByRole('link', { name: 'Objects' }).waitFor();
    expect(await member.page.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    await member.page.goto(`${live.origin}/console/webhooks`);
    const alert = member.page.getByRole('alert').first();
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/permission|webhooks/i);
    expect(await alert.innerText()).not.toContain('{');
    expect(await member.page.getByRole('button', { name: 'Create webhook' }).count()).toBe(0);
    expect(await checkPage(member.page, 'webhooks-refused')).toEqual([]);
    expect(member.problems).toEqual([]);
    await member.context.close();
  });

  it('pages the delivery log, and a filter starts again from its first page', async () => {
    receiver.answer = () => ({ status: 200 });
    for (let i = 0; i < 21; i++) await mint();
    await page.getByRole('button', { name: 'Refresh' }).click();
    const rows = page.getByTestId('deliveries').locator('tbody > tr');
    await expect.poll(() => rows.count()).toBe(20);
    const webhookId = (await page.locator('dl code').first().innerText()).trim();
    const { events } = await createOnsClient({ baseUrl: live.origin }).GET(
      '/webhooks/{webhookId}/events',
      { params: { path: { webhookId }, query: { limit: 100 } }, headers: signer.headers },
    );
    const total = events.length;
    expect(total).toBeGreaterThan(21);
    await page.getByRole('button', { name: 'Older deliveries' }).click();
    await expect.poll(() => rows.count()).toBe(Math.min(total, 40));
    await page.getByLabel('Status').selectOption('stopped');
    await expect
      .poll(() => rows.allInnerTexts())
      .not.toContainEqual(expect.stringContaining('done'));
    expect(await rows.count()).toBeLessThanOrEqual(20);
    expect(tab.problems).toEqual([]);
  });

  it('deletes the webhook', async () => {
    await page.getByRole('button', { name: 'Delete the webhook' }).click();
    await page.getByRole('button', { name: 'Delete the webhook' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await page.getByText('No webhooks yet.').waitFor();
    expect(tab.problems).toEqual([]);
  });

  // Last: it moves the service's clock past the sign-in's 10 minutes (docs/auth.md, "Changing
  // credentials").
  it("asks for a new sign-in to create a webhook 11 minutes after signing in, in the service's words", async () => {
    live.svc.clock.advance(11 * 60_000);
    const fill = async () => {
      await page.getByLabel('Endpoint URL (https)').fill(receiver.url);
      await page.getByLabel('Template (rule 1)').selectOption(templateId);
      await page.getByRole('button', { name: 'Create webhook' }).click();
    };
    await fill();
    const alert = page.locator('form .error');
    await alert.waitFor();
    expect(await alert.innerText()).toContain(
      'sign in again to create a webhook (a sign-in within the last 10 minutes)',
    );
    expect(await alert.innerText()).not.toContain('{');
    expect(await checkPage(page, 'webhook-reauthenticate')).toEqual([]);
    expect(await page.getByText('No webhooks yet.').count()).toBe(1);

    // Signed in again, the same form makes it.
    await signInWithPassword(page, live.origin, ownerEmail, PASSWORD);
    await page.getByText('Hooks Org').waitFor();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    await fill();
    await page.getByTestId('webhook-signing-key').waitFor();
    expect(tab.problems).toEqual([]);
  });
});
