import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOnsClient, isOnsError } from '@ons/sdk';
import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { RESOURCES } from '../../src/lib/permissions.js';
import { createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import { uniqueEmail } from '../helpers/identity.js';
import {
  axeViolations,
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
 * Issue 32 item 7, care: every page usable at 390 px, confirmations before destructive
 * actions and role changes with a notice after, an API key that grants nothing refused before
 * it is sent, the API-key presets, navigation and forms by role, and the whole error of a
 * webhook delivery.
 */
describeWithChromium('console: care', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let owner: Awaited<ReturnType<typeof ownerWithOrganization>>;
  let objectId = '';
  let batchId = '';
  let webhookId = '';
  let memberEmail = '';
  // An error as long as a receiver's could be: every character of it must be shown.
  const longError = `not delivered: ECONNRESET ${'the endpoint closed the connection mid-answer; '.repeat(12)}(end of error)`;

  const signIn = async (p: Page, email: string) => {
    await signInWithPassword(p, live.origin, email, PASSWORD);
    await p.getByText('Care Org').first().waitFor();
  };

  beforeAll(async () => {
    live = await startConsoleService({
      env: {
        BATCH_MAX_ACTIONS: '2',
        BATCH_MAX_SECONDS: '10',
        WEBHOOK_ALLOW_LOOPBACK: 'true',
        WEBHOOK_DELIVERY: 'false',
      },
    });
    const { svc } = live;
    owner = await ownerWithOrganization(live.origin, 'care-owner', 'Care Org');
    const { orgId, api } = owner;
    await fund(svc, orgId, 10n ** 21n);
    const signer = await createSigner(svc, { orgId });
    const templateId = await createTemplate(svc, orgId);
    for (let nonce = 0; nonce < 2; nonce++) {
      const body = await signEoa(svc, signer, {
        name: 'mint',
        params: { template_id: templateId, metadata: { name: `Season ticket ${nonce}` } },
        nonce,
      });
      const res = await svc.app.inject({
        method: 'POST',
        url: '/ebus/execute',
        headers: signer.headers,
        payload: body,
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      objectId = res.json<{ object: { id: string } }>().object.id;
    }
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
    // A sealed batch: its page shows every hash (the longest values of the console).
    const { batches } = await api.GET('/batches', { params: { query: { limit: 10 } } });
    batchId = batches.find((b) => b.hash)!.id;

    // The owner's client acts in Care Org from now on.
    api.setSession(await api.POST('/organizations/switch', { body: { organization_id: orgId } }));
    webhookId = (
      await api.POST('/webhooks', {
        body: {
          url: 'https://127.0.0.1:9/a/rather/long/path/for/the/orders/of/the/care/organization',
          description: 'orders',
          rules: [{ template_id: templateId }],
        },
      })
    ).id;
    const now = svc.clock.now();
    await svc.container.db.execute(sql`INSERT INTO webhook_deliveries
      (id, organization_id, webhook_id, action_id, event, status, attempts, created_at, updated_at)
      VALUES (${newId('event')}, ${orgId}, ${webhookId}, ${newId('action')}, '{}', 'failed',
        ${JSON.stringify([
          { when_created: now.toISOString(), status_code: null, duration_ms: 41, error: longError },
        ])}::jsonb, ${now}, ${now})`);
    await api.POST('/api-keys', {
      body: {
        name: 'Reporting',
        permissions: [{ resource: 'objects', crud: { read: true } }],
      },
    });
    await api.POST('/policies', {
      body: { name: 'hourly cap', target_type: 'organization', period: 'hour', max_actions: 50 },
    });
    // A plain member (self sign-up), with a long email.
    memberEmail = uniqueEmail('a-member-with-a-rather-long-address');
    await createOnsClient({ baseUrl: live.origin }).POST('/organizations/wallets', {
      body: { email: memberEmail, password: PASSWORD, organization_id: orgId },
    });

    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
    await signIn(page, owner.email);
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  /** Waits until the page has its heading and nothing is loading any more. */
  const settled = async (p: Page) => {
    await p.locator('h1').first().waitFor();
    await p.waitForLoadState('networkidle');
    await expect.poll(() => p.locator('.progress').count()).toBe(0);
  };

  /** The elements wider than the screen, when the document is (none: it fits). */
  const overflow = (p: Page) =>
    p.evaluate(() => {
      const g = globalThis as unknown as {
        document: {
          documentElement: { scrollWidth: number; clientWidth: number };
          querySelectorAll(s: string): ArrayLike<{
            tagName: string;
            className: string;
            getBoundingClientRect(): { right: number };
          }>;
        };
      };
      const root = g.document.documentElement;
      if (root.scrollWidth <= root.clientWidth) return [];
      return Array.from(g.document.querySelectorAll('body *'))
        .filter((e) => e.getBoundingClientRect().right > root.clientWidth + 0.5)
        .slice(0, 5)
        .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
    });

  it('shows every page at 390 px without horizontal scrolling (screenshots in a temp folder)', async () => {
    const shots = mkdtempSync(path.join(tmpdir(), 'ons-console-390-'));
    const signedIn: [string, string][] = [
      ['overview', '/console/'],
      ['organization', '/console/organization'],
      ['members', '/console/members'],
      ['balance', '/console/balance'],
      ['api-keys', '/console/api-keys'],
      ['policies', '/console/policies'],
      ['templates', '/console/templates'],
      ['objects', '/console/objects'],
      ['object', `/console/objects/${objectId}`],
      ['webhooks', '/console/webhooks'],
      ['webhook', `/console/webhooks/${webhookId}`],
      ['sessions', '/console/sessions'],
      ['explorer', '/console/explorer'],
      ['explorer-batch', `/console/explorer/batches/${batchId}`],
      ['explorer-object', `/console/explorer/objects/${objectId}`],
      ['invitation', '/console/invitation'],
      ['not-found', '/console/no-such-page'],
    ];
    const out = await browser.newPage();
    const signedOut: [string, string][] = [
      ['sign-in', '/console/sign-in'],
      ['sign-up', '/console/sign-up'],
      ['explorer-signed-out', '/console/explorer'],
    ];
    const problems: string[] = [];
    for (const [p, pages] of [
      [page, signedIn],
      [out.page, signedOut],
    ] as const) {
      await p.setViewportSize({ width: 390, height: 844 });
      for (const [name, address] of pages) {
        await p.goto(`${live.origin}${address}`);
        await settled(p);
        await p.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
        const wide = await overflow(p);
        if (wide.length > 0) problems.push(`${name}: wider than 390 px: ${wide.join(', ')}`);
        for (const v of await axeViolations(p)) problems.push(`${name}: ${v}`);
      }
    }
    expect(problems).toEqual([]);
    expect(tab.problems).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    await out.context.close();
    // Twenty pages, each settled and checked by axe: more than one test's usual 30 s.
  }, 120_000);

  it('asks before deleting a key, and says what was done', async () => {
    await page.goto(`${live.origin}/console/api-keys`);
    const row = page.locator('tbody tr', { hasText: 'Reporting' });
    await row.waitFor();
    await page.getByRole('button', { name: 'Delete Reporting' }).click();
    const confirm = page.getByRole('group', { name: 'Please confirm' });
    await confirm.getByText('Delete the key Reporting? Whatever uses it stops working').waitFor();
    // Cancel has the focus: a second click or Enter does not delete by accident.
    expect(
      await confirm
        .getByRole('button', { name: 'Cancel' })
        .evaluate((b) => b === b.ownerDocument.activeElement),
    ).toBe(true);
    expect(await checkPage(page, 'care-confirm')).toEqual([]);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached' });
    expect((await owner.api.GET('/api-keys')).keys.map((k) => k.name)).toEqual(['Reporting']);

    await page.getByRole('button', { name: 'Delete Reporting' }).click();
    await confirm.getByRole('button', { name: 'Delete the key' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'The key Reporting is deleted' }).waitFor();
    expect((await owner.api.GET('/api-keys')).keys).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('refuses a key that grants nothing before sending it; the service refuses it too', async () => {
    const posts: string[] = [];
    const watch = (r: { method(): string; url(): string }) => {
      if (r.method() === 'POST' && r.url().endsWith('/api-keys')) posts.push(r.url());
    };
    page.on('request', watch);
    await page.getByLabel('Name').fill('Nothing at all');
    await page.getByTestId('chosen-count').getByText('No permission chosen yet').waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    const alert = page.locator('form .error');
    await alert.getByText('Choose at least one permission').waitFor();
    expect(await checkPage(page, 'care-empty-key')).toEqual([]);
    page.off('request', watch);
    expect(posts).toEqual([]);
    expect(await page.getByTestId('api-key-secret').count()).toBe(0);

    const refused = await owner.api
      .POST('/api-keys', { body: { name: 'Nothing at all', permissions: [] } })
      .catch((e: unknown) => e);
    expect(isOnsError(refused) && [refused.status, refused.code]).toEqual([400, 3]);
  });

  it('fills the permissions from a preset: read-only, minting backend, full', async () => {
    const checked = async () =>
      (
        await page
          .locator('form input[type="checkbox"]:checked')
          .evaluateAll((boxes) => boxes.map((b) => b.getAttribute('aria-label') ?? ''))
      ).sort();
    // An owner holds every read: the preset is one per resource of the service's table.
    await page.getByRole('button', { name: 'Read-only' }).click();
    await expect.poll(checked).toEqual(RESOURCES.map((r) => `${r} read`).sort());
    await page.getByRole('button', { name: 'Full' }).click();
    // The owner holds everything: every box.
    await expect.poll(async () => (await checked()).length).toBe(RESOURCES.length * 4);
    await page.getByRole('button', { name: 'Minting backend' }).click();
    const minting = [
      'actions create',
      'actions read',
      'actions update',
      'objects create',
      'objects read',
      'objects update',
      'templates read',
    ];
    await expect.poll(checked).toEqual(minting);
    await page.getByTestId('chosen-count').getByText('7 permissions chosen.').waitFor();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('api-key-secret').waitFor();
    const [made] = (await owner.api.GET('/api-keys')).keys;
    expect(made!.name).toBe('Nothing at all');
    expect(
      made!.permissions.flatMap((p) =>
        Object.entries(p.crud)
          .filter(([, on]) => on)
          .map(([op]) => `${p.resource} ${op}`),
      ),
    ).toEqual(expect.arrayContaining(minting));
    expect(tab.problems).toEqual([]);
  });

  it('shows a webhook delivery’s whole error', async () => {
    await page.goto(`${live.origin}/console/webhooks/${webhookId}`);
    const error = page.getByTestId('deliveries').locator('.attempt-error');
    await error.waitFor();
    expect(await error.innerText()).toBe(longError);
    expect(await checkPage(page, 'care-delivery-error')).toEqual([]);
  });

  it('asks before a role change and says what changed', async () => {
    const members = async () =>
      (
        await owner.api.GET('/organizations/{organizationId}/members', {
          params: { path: { organizationId: owner.orgId } },
        })
      ).members;
    // The self-signed-up member is listed by its wallet id (it gave no name).
    const who = (await members()).find((m) => m.role === 'member')!.wallet_id!;
    await page.goto(`${live.origin}/console/members`);
    await page.getByLabel(`Role of ${who}`).selectOption('viewer');
    await page.getByText(`Change the role of ${who} from member to viewer?`).waitFor();
    await page.getByRole('button', { name: 'Change the role' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${who} is now viewer.` })
      .waitFor();
    expect((await members()).find((m) => m.wallet_id === who)?.role).toBe('viewer');
    expect(tab.problems).toEqual([]);
  });

  it('offers a viewer only the pages and forms its role can use; the service stays the judge', async () => {
    const viewer = await browser.newPage();
    await signIn(viewer.page, memberEmail);
    const nav = viewer.page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Objects' }).waitFor();
    expect((await nav.getByRole('link').allInnerTexts()).sort()).toEqual(
      [
        'Balance',
        'Explorer',
        'Objects',
        'Organization',
        'Overview',
        'Sessions',
        'Templates',
      ].sort(),
    );
    // No form it could not use…
    await viewer.page.getByRole('link', { name: 'Templates' }).click();
    await viewer.page.getByTestId('templates').waitFor();
    expect(await viewer.page.getByRole('button', { name: 'New template' }).count()).toBe(0);
    expect(await viewer.page.getByRole('button', { name: /^Edit / }).count()).toBe(0);
    await viewer.page.getByRole('link', { name: 'Objects' }).click();
    await viewer.page.getByTestId('objects').waitFor();
    expect(await viewer.page.getByRole('heading', { name: 'Mint an object' }).count()).toBe(0);
    // …and a page opened by its address shows the service's refusal, with no form.
    await viewer.page.goto(`${live.origin}/console/members`);
    await viewer.page.getByRole('alert').waitFor();
    expect(await viewer.page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    expect(await viewer.page.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0);
    expect(await checkPage(viewer.page, 'care-viewer')).toEqual([]);
    expect(viewer.problems).toEqual([]);
    await viewer.context.close();
  });
});
