import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner, createTemplate, fund, signEoa } from '../helpers/ebus.js';
import {
  checkPage,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsolePage,
  type ConsoleService,
  describeWithChromium,
} from './harness.js';

/**
 * Issue 19 item 6: the public explorer. Seven actions sealed into batches of at most three;
 * the batch page shows every field of a batch (docs/batches.md) and verifies the batch in the
 * browser with the SDK's offline checks; a tampered content byte makes the verdict name the failed
 * check.
 */
describeWithChromium('console: explorer', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let objectId = '';

  beforeAll(async () => {
    live = await startConsoleService({
      env: { BATCH_MAX_ACTIONS: '3', BATCH_MAX_SECONDS: '10' },
    });
    const { svc } = live;
    const owner = await createSigner(svc);
    const other = await createSigner(svc, { orgId: owner.orgId });
    await fund(svc, owner.orgId, 10n ** 21n);
    const template = await createTemplate(svc, owner.orgId, {
      faces: [{ id: 'front', url: '', config: {}, content: 'Seat <b>12A</b>' }],
    });
    const hidden = await createTemplate(svc, owner.orgId, { isPublic: false });
    let nonce = 0;
    const run = async (name: string, params: Record<string, unknown>) => {
      const body = await signEoa(svc, owner, { name, params, nonce: nonce++ });
      const res = await svc.app.inject({
        method: 'POST',
        url: '/ebus/execute',
        headers: owner.headers,
        payload: body,
      });
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.body}`);
      svc.clock.advance(1000);
      return res.json<{ object: { id: string } }>().object.id;
    };
    objectId = await run('mint', {
      template_id: template,
      metadata: { name: 'Concert ticket' },
      custom: { seat: '12A' },
    });
    await run('update', { object_id: objectId, custom: { seat: '14C' } });
    await run('mint', { template_id: template });
    await run('mint', { template_id: template });
    await run('transfer', { object_id: objectId, to: other.address });
    await run('mint', { template_id: template });
    await run('mint', { template_id: hidden });
    const settle = async () => {
      for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
    };
    await settle();
    svc.clock.advance(11_000);
    await settle();
    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  it('lists the batches newest first, without sign-in', async () => {
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByRole('heading', { name: 'Explorer' }).waitFor();
    const first = page.locator('tbody tr').first();
    await first.waitFor();
    const rows = await page.locator('tbody tr td:first-child').allInnerTexts();
    // Three sealed (seven actions, at most three each) and the one being built, newest first.
    expect(rows).toEqual(['Batch 4', 'Batch 3', 'Batch 2', 'Batch 1']);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await checkPage(page, 'explorer')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it("shows a batch's every field and actions, and verifies it in the browser", async () => {
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByRole('link', { name: 'Batch 2' }).click();
    await page.getByRole('heading', { name: 'Batch 2' }).waitFor();
    const fields = await page.getByTestId('batch-fields').innerText();
    // Every field, labelled in words (the API's name is the label's title).
    for (const f of [
      'ID',
      'Sequence',
      'Hash',
      'Previous hash',
      'Integrity root',
      'Previous integrity root',
      'Sender',
      'L2 transaction hash',
      'L2 finalization transaction hash',
      'Commitment',
      'Actions hash',
      'Actions count',
      'Total fee',
      'Total fee (wei)',
      'Version',
      'IPFS URL',
      'Superseded IPFS URLs',
      'Status',
      'Proof type',
      'Proof value',
      'Proof public values',
      'Proof verification key',
      'Proof message',
      'Proof ID',
      'Error',
      'Challenge window end',
      'Completed',
      'Modified',
      'Created',
    ]) {
      expect(fields).toMatch(new RegExp(`^${f.replace(/[()]/g, '\\$&')}$`, 'm'));
    }
    const labels = await page.getByTestId('batch-fields').locator('dt').allInnerTexts();
    expect(labels.filter((l) => /[_.]/.test(l))).toEqual([]);
    expect(
      await page.locator('[data-testid="batch-fields"] dt[title="integrity_root"]').innerText(),
    ).toBe('Integrity root');
    expect(fields).toContain('ipfs://');
    expect(fields).toContain('ed25519-attestation');
    await expect.poll(() => page.locator('table').last().locator('tbody tr').count()).toBe(3);

    await page.getByRole('button', { name: 'Verify in the browser' }).click();
    const verdict = page.getByTestId('verdict');
    await verdict.waitFor();
    await page.getByText('Verified: every check passed.').waitFor();
    const lines = await verdict.locator('tbody tr').allInnerTexts();
    // The 11 checks of the batch (integrity_root too: every object it touched is public and
    // replayed), each object's replayed history, each action's signature and inclusion proof.
    expect(lines).toHaveLength(11 + 3 + 3 + 3);
    expect(lines.every((l) => l.trim().endsWith('passed'))).toBe(true);
    expect(lines.filter((l) => l.includes('signature'))).toHaveLength(3);
    expect(lines.filter((l) => l.includes('replays to its hashes'))).toHaveLength(3);
    expect(await checkPage(page, 'explorer-batch-verified')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('names the failed check when one byte of the content is changed', async () => {
    const tampered = await browser.newPage();
    // The content waits until the test has seen the progress the page shows meanwhile.
    let release = () => {};
    const seen = new Promise<void>((resolve) => (release = resolve));
    await tampered.page.route('**/batches/*/content', async (route) => {
      await seen;
      const res = await route.fetch();
      const body = await res.body();
      // One byte of the first action's hash: still JSON, header unchanged.
      const at = body.indexOf('"actions"');
      const hashAt = body.indexOf('"hash":"0x', at) + 10;
      body[hashAt] = body[hashAt] === 0x30 ? 0x31 : 0x30;
      await route.fulfill({ response: res, body });
    });
    await tampered.page.goto(`${live.origin}/console/explorer`);
    await tampered.page.getByRole('link', { name: 'Batch 1' }).click();
    await tampered.page.getByRole('button', { name: 'Verify in the browser' }).click();
    await tampered.page.getByRole('status').getByText('Downloading the batch content…').waitFor();
    expect(
      await tampered.page.getByRole('button', { name: 'Verify in the browser' }).isDisabled(),
    ).toBe(true);
    await tampered.page.getByRole('progressbar', { name: 'Verification progress' }).waitFor();
    release();
    await tampered.page.getByText('Not verified: a check failed').waitFor();
    // The content no longer hashes to its CID, and its copy of the action, no longer the
    // record whose signature was checked, is checked on its own and fails too.
    const failed = await tampered.page.locator('tr.check-failed').allInnerTexts();
    expect(failed).toHaveLength(2);
    expect(failed.join('\n')).toContain('ipfs_url is not the CID of the content');
    expect(failed.join('\n')).toContain('the hash is not SHA-256 of the text');
    expect(await tampered.page.locator('tr.check-not-checked').count()).toBeGreaterThan(0);
    expect(await checkPage(tampered.page, 'explorer-batch-tampered')).toEqual([]);
    expect(tampered.problems).toEqual([]);
    await tampered.context.close();
  });

  it('verifies a batch with a private object: its history is skipped, integrity_root is recomputed from the content', async () => {
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByRole('link', { name: 'Batch 3' }).click();
    await page.getByRole('button', { name: 'Verify in the browser' }).click();
    await page
      .getByText('Verified: every check that could be made passed; some were skipped')
      .waitFor();
    const verdict = page.getByTestId('verdict');
    expect(await verdict.locator('tr.check-skipped').allInnerTexts()).toEqual([
      expect.stringContaining('Objects not replayed (1 not public)'),
    ]);
    expect(await verdict.locator('tr.check-passed').allInnerTexts()).toContainEqual(
      expect.stringContaining('integrity_root is the tree over its objects'),
    );
    // The private object's mint is listed as private, without its name, and its inclusion
    // proof (from its commitment) passes.
    const passed = await verdict.locator('tr.check-passed').allInnerTexts();
    expect(passed).toContainEqual(expect.stringMatching(/\(private\) is in actions_hash/));
    const rows = await page.locator('table').last().locator('tbody tr').allInnerTexts();
    const privateRows = rows.filter((r) => r.includes('private'));
    expect(privateRows).toHaveLength(1);
    expect(privateRows[0]).not.toContain('mint');
    expect(await verdict.locator('tr.check-failed').count()).toBe(0);
    expect(tab.problems).toEqual([]);
  });

  it("shows a public object's faces (as text, never HTML) and history", async () => {
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByLabel('Object id').fill(objectId);
    await page.getByRole('button', { name: 'Open the object' }).click();
    await page.getByRole('heading', { name: 'Concert ticket' }).waitFor();
    const history = page.getByTestId('history');
    await history.waitFor();
    const names = await history.locator('tbody tr td:nth-child(2)').allInnerTexts();
    expect(names.map((n) => n.split('\n')[0])).toEqual(['transfer', 'update', 'mint']);
    await page.getByText('Seat <b>12A</b>').waitFor();
    expect(await page.locator('.face b').count()).toBe(0);
    expect(await checkPage(page, 'explorer-object')).toEqual([]);
    await page.getByRole('link', { name: 'open batch' }).first().click();
    await page.getByRole('heading', { name: /^Batch \d$/ }).waitFor();
    expect(tab.problems).toEqual([]);
  });

  it('shows an unknown batch as the service’s message', async () => {
    await page.goto(`${live.origin}/console/explorer/batches/batch_nope`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).not.toContain('{');
    expect(tab.problems).toEqual([]);
  });
});
