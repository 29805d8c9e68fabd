import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApiKey } from '../helpers/api-keys.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { call } from '../helpers/webhooks.js';
import { makeTestCa, startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
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
 * Issue 32 item 3: the overview is a dashboard. A fresh organization shows an unticked
 * checklist and empty states that each say what to do next; once it has funds, a template,
 * a minted object, a webhook (whose receiver fails) and an API key, every step is ticked,
 * the mint is among the recent actions and the failing delivery among the open ones.
 */
describeWithChromium('console: the overview dashboard', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let receiver: Receiver;
  let owner: Awaited<ReturnType<typeof ownerWithOrganization>>;
  let signer: EoaSigner;

  beforeAll(async () => {
    const ca = await makeTestCa();
    live = await startConsoleService({
      env: {
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_CA_FILE: ca.caFile,
        // The test runs the delivery worker itself (runOnce), after the mint.
        WEBHOOK_DELIVERY: 'false',
      },
    });
    receiver = await startReceiver(ca, () => ({ status: 500 }));
    owner = await ownerWithOrganization(live.origin, 'dashboard', 'Dashboard Org');
    signer = await createSigner(live.svc, { orgId: owner.orgId });
    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
    await signInWithPassword(page, live.origin, owner.email, PASSWORD);
    await page.getByText('Dashboard Org').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await live?.stop();
  });

  it('shows a fresh organization its empty states and an unticked checklist', async () => {
    await page.goto(`${live.origin}/console/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const checklist = page.getByTestId('checklist');
    await checklist.getByText('✓ An organization').waitFor();
    for (const open of [
      '○ Funds for fees — deposit to your organization',
      '○ A template — create one',
      '○ A first object — mint one',
      '○ A webhook — add one',
      '○ An API key — create one',
    ]) {
      await checklist.getByText(open).waitFor();
    }
    expect(await page.getByTestId('checklist-done').count()).toBe(0);

    const balance = page.getByTestId('balance-summary');
    await balance.getByText(/enough for 0 actions/).waitFor();
    expect(await balance.getByRole('link').getAttribute('href')).toBe('/console/balance');

    const actions = page.getByTestId('recent-actions');
    await actions.getByText('No actions yet.').waitFor();
    // No template yet: the next step is a template, not a mint.
    expect(await actions.getByRole('link', { name: 'create one' }).getAttribute('href')).toBe(
      '/console/templates',
    );
    expect(await actions.locator('table').count()).toBe(0);

    const deliveries = page.getByTestId('open-deliveries');
    await deliveries.getByText('No webhooks yet').waitFor();
    expect(await deliveries.getByRole('link', { name: 'add one' }).getAttribute('href')).toBe(
      '/console/webhooks',
    );
    expect(await deliveries.locator('table').count()).toBe(0);
    expect(await checkPage(page, 'overview-empty')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('ticks every step and lists the mint and the failing delivery', async () => {
    const { svc } = live;
    const { orgId } = owner;
    await fund(svc, orgId, 10n ** 19n);
    const templateId = await createTemplate(svc, orgId, { isPublic: false });
    const hook: { id: string } = await call(svc, signer, 'POST', '/webhooks', {
      url: receiver.url,
      description: 'orders',
      rules: [{ template_id: templateId }],
    });
    // A template and a webhook but no action yet: the empty states name the next step.
    await page.reload();
    const actions = page.getByTestId('recent-actions');
    await actions.getByRole('link', { name: 'Mint a first object' }).waitFor();
    const deliveries = page.getByTestId('open-deliveries');
    await deliveries.getByText('Nothing open: every delivery has arrived.').waitFor();

    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: signer.headers,
      payload: await signEoa(svc, signer, {
        name: 'mint',
        params: { template_id: templateId, metadata: { name: 'Front row' } },
        nonce: 0,
      }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const objectId = res.json<{ object: { id: string } }>().object.id;
    await svc.container.webhookWorker.runOnce();
    expect(receiver.received).toHaveLength(1);
    await createApiKey(svc, signer, ['objects.read'], { name: 'backend' });

    await page.reload();
    const checklist = page.getByTestId('checklist');
    for (const step of [
      'An organization',
      'Funds for fees',
      'A template',
      'A first object',
      'A webhook',
      'An API key',
    ]) {
      await checklist.getByText(`✓ ${step}`).waitFor();
    }
    await page.getByTestId('checklist-done').waitFor();
    expect(await checklist.locator('a').count()).toBe(0);
    // 10 ONS less the mint's fee, at 0.0011 ONS an action.
    expect(await page.getByTestId('balance-summary').innerText()).toBe(
      'Balance: 9.9989 ONS, enough for 9089 actions at today’s fee (0.0011 ONS each).',
    );

    const row = actions.locator('tbody tr');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.innerText()).toContain('mint');
    expect(await row.innerText()).toContain('signed with a crypto wallet');
    // The object by its name, linking to its page.
    expect(await row.getByRole('link').innerText()).toBe('Front row');
    expect(await row.getByRole('link').getAttribute('href')).toBe(`/console/objects/${objectId}`);

    const open = deliveries.locator('tbody tr');
    await expect.poll(() => open.count()).toBe(1);
    const text = await open.innerText();
    expect(text).toContain('failed, retrying');
    expect(text).toContain('answered 500');
    expect(await open.getByRole('link', { name: 'orders' }).getAttribute('href')).toBe(
      `/console/webhooks/${hook.id}`,
    );
    expect(await checkPage(page, 'overview-dashboard')).toEqual([]);

    // The object link opens the minted object.
    await row.getByRole('link').click();
    await page.getByRole('heading', { name: 'Front row' }).waitFor();
    expect(tab.problems).toEqual([]);
  });
});
