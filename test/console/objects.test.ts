import { createOnsClient } from '@ons/sdk';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { createOrganization } from '../helpers/fixtures.js';
import {
  addVirtualAuthenticator,
  checkPage,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
  type ConsoleService,
  describeWithChromium,
} from './harness.js';

/**
 * Issue 19 item 7: the organization's templates and objects with their faces, and a transfer
 * signed in the browser with the signed-in person's passkey (the CDP virtual authenticator).
 */
describeWithChromium('console: objects', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let minter: EoaSigner;
  let recipient: EoaSigner;
  let templateId = '';
  let objectId = '';
  let myAddress = '';

  beforeAll(async () => {
    live = await startConsoleService();
    const { svc } = live;
    const orgId = await createOrganization(svc, { name: 'Objects Org', allowSelfSignup: true });
    minter = await createSigner(svc, { orgId });
    recipient = await createSigner(svc, { orgId, role: 'member' });
    await fund(svc, orgId, 10n ** 21n);
    templateId = await createTemplate(svc, orgId, {
      faces: [
        { id: 'front', url: 'https://images.invalid/front.png', config: {}, content: '' },
        {
          id: 'back',
          url: 'http://insecure.invalid/back.png',
          config: { style: 'color: red' },
          content: '<img src=x onerror="alert(1)"> Row 7',
        },
      ],
    });

    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
    await addVirtualAuthenticator(page);
    await page.goto(`${live.origin}/console/sign-up`);
    await page.getByLabel('Organization to join').fill(orgId);
    await page.getByRole('button', { name: 'Sign up with a passkey' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByText('Objects Org').waitFor();
    const stored = await page.evaluate(() =>
      (
        globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }
      ).sessionStorage.getItem('ons.console.session'),
    );
    const me = createOnsClient({ baseUrl: live.origin, session: JSON.parse(stored!) });
    myAddress = (await me.GET('/wallets/me')).address.toLowerCase();

    // Minted for the signed-in wallet by another member of the organization.
    const body = await signEoa(svc, minter, {
      name: 'mint',
      params: { template_id: templateId, owner: myAddress, metadata: { name: 'Gold pass' } },
      nonce: 0,
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: minter.headers,
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(res.body);
    objectId = res.json<{ object: { id: string } }>().object.id;
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('lists templates and objects with their faces, rendered safely', async () => {
    // The list is read once: the wallet's address, which arrives later, does not filter it, so
    // it must not reload it (a reload empties the table while it runs).
    const reads: string[] = [];
    const onRequest = (r: { url(): string }) => {
      const url = new URL(r.url());
      if (url.pathname.endsWith('/objects')) reads.push(url.search);
    };
    page.on('request', onRequest);
    const me = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/wallets/me'));
    await page.getByRole('link', { name: 'Objects', exact: true }).click();
    await me;
    await page.getByRole('heading', { level: 1, name: 'Objects' }).waitFor();
    const templates = page.getByTestId('templates');
    await templates.waitFor();
    expect(await templates.innerText()).toContain(templateId);
    const objects = page.getByTestId('objects');
    await objects.locator('tbody tr', { hasText: 'Gold pass' }).waitFor();
    // An https face is an image; an http one (the CSP would refuse it) and the text face are
    // shown as text: no element from the content, no style from the config.
    // The faces come with the templates, which may load after the objects.
    await page.locator('img[alt="Gold pass: face front"]').waitFor();
    expect(await page.locator('img[alt="Gold pass: face front"]').count()).toBe(1);
    expect(await page.locator('img[alt="Gold pass: face back"]').count()).toBe(0);
    await objects.getByText('<img src=x onerror="alert(1)"> Row 7').waitFor();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(await page.locator('[style*="color"]').count()).toBe(0);
    const row = objects.locator('tbody tr', { hasText: 'Gold pass' });
    expect(await row.innerText()).toContain(myAddress);
    page.off('request', onRequest);
    expect(reads).toHaveLength(1);
    expect(await checkPage(page, 'objects')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('shows a refused transfer as its message', async () => {
    await page.getByRole('button', { name: 'Transfer Gold pass' }).click();
    await page.getByLabel('New owner’s address (0x…)').fill('0x1234');
    await page.getByRole('button', { name: 'Sign with your passkey and transfer' }).click();
    const alert = page.locator('form.transfer .error');
    await alert.waitFor();
    // The service's message and the refused field, never its JSON body.
    expect(await alert.innerText()).toContain('action.params.to');
    expect(await alert.innerText()).not.toContain('"code"');
    expect(await checkPage(page, 'objects-transfer-refused')).toEqual([]);
  });

  it('transfers an object, signed with the passkey, and shows the new owner', async () => {
    await page.getByLabel('New owner’s address (0x…)').fill(recipient.address);
    await page.getByRole('button', { name: 'Sign with your passkey and transfer' }).click();
    await page.getByText(`Gold pass now belongs to ${recipient.address.toLowerCase()}.`).waitFor();
    const row = page.getByTestId('objects').locator('tbody tr', { hasText: 'Gold pass' });
    await row.getByText(recipient.address.toLowerCase()).waitFor();
    expect(await page.getByRole('button', { name: 'Transfer Gold pass' }).count()).toBe(0);
    expect(await checkPage(page, 'objects-transferred')).toEqual([]);

    // The service agrees, and the action was signed with the passkey.
    const history = await createOnsClient({ baseUrl: live.origin }).GET(
      '/public/objects/{id}/history',
      { params: { path: { id: objectId } } },
    );
    expect(history.action_logs[0]).toMatchObject({
      name: 'transfer',
      wallet: myAddress,
      signature_type: 'webauthn',
      params: { object_id: objectId, to: recipient.address.toLowerCase() },
    });
    expect(tab.problems).toEqual([]);
  });

  it('asks for sign-in without a session', async () => {
    const anon = await browser.newPage();
    await anon.page.goto(`${live.origin}/console/objects`);
    await anon.page.getByRole('heading', { name: 'Sign in first' }).waitFor();
    expect(anon.problems).toEqual([]);
    await anon.context.close();
  });
});
