import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseVerifierKey } from '../../sdk/src/log/note.js';
import {
  cosignatureVerifierKey,
  noteVerifierKey,
  signerFromSeed,
} from '../../sdk/src/log/signer.js';
import { Witness } from '../../sdk/src/log/witness.js';
import { createSigner, createTemplate, fund, type EoaSigner } from '../helpers/ebus.js';
import type { TestService } from '../helpers/service.js';
import { call, execute } from '../helpers/webhooks.js';
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
 * Three mints by `signer` (nonces 0–2), which fill a batch (BATCH_MAX_ACTIONS=3), sealed and
 * appended to the log; answers the objects' ids.
 */
async function mintThreeIntoTheLog(
  svc: TestService,
  signer: EoaSigner,
  template: string,
): Promise<string[]> {
  const objectIds: string[] = [];
  for (let nonce = 0; nonce < 3; nonce++) {
    const { object } = await execute(svc, signer, 'mint', { template_id: template }, nonce);
    objectIds.push(object.id);
  }
  for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
  await svc.container.log.settled();
  return objectIds;
}

/**
 * Issue 33 item 7 (console): the explorer shows the log's latest checkpoint, checked in the
 * browser, and its witnesses with when they cosigned it; "Verify receipt" on an action checks
 * its receipt with the SDK's verifyReceipt in the browser. On an object's page, signed in, each
 * action of the organization's objects has it too, private ones included (their leaf is the
 * salted commitment, which the receipt opens for the organization only).
 */
describeWithChromium('console: the transparency log in the explorer', () => {
  const seed = new Uint8Array(32).fill(2);
  const witnessKey = signerFromSeed('witness.console.example', new Uint8Array(32).fill(3));
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  let tab: ConsolePage;
  let page: Page;
  let dir: string;
  let witnessServer: Server;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ons-console-log-'));
    const origin = 'log.console.example';
    const witness = await Witness.open({
      signer: witnessKey,
      logs: [parseVerifierKey(noteVerifierKey(signerFromSeed(origin, seed)))],
      statePath: join(dir, 'witness.json'),
    });
    const w = await witness.listen(0);
    witnessServer = w.server;
    live = await startConsoleService({
      env: {
        BATCH_MAX_ACTIONS: '3',
        BATCH_MAX_SECONDS: '10',
        LOG_SIGNING_KEY: Buffer.from(seed).toString('hex'),
        LOG_ORIGIN: origin,
        LOG_WITNESSES: `${cosignatureVerifierKey(witnessKey)}=${w.url}`,
      },
    });
    const { svc } = live;
    const owner = await createSigner(svc);
    await fund(svc, owner.orgId, 10n ** 21n);
    const template = await createTemplate(svc, owner.orgId);
    await mintThreeIntoTheLog(svc, owner, template);
    browser = await launchBrowser();
    tab = await browser.newPage();
    page = tab.page;
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
    await new Promise((r) => witnessServer?.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('shows the latest checkpoint, verified, and the witness that cosigned it', async () => {
    await page.goto(`${live.origin}/console/explorer`);
    const panel = page.getByTestId('log-checkpoint');
    await panel.waitFor();
    await page.getByText("The latest checkpoint is signed by the log's key").waitFor();
    const text = await panel.innerText();
    expect(text).toContain('log.console.example');
    expect(text).toMatch(/Tree size \(actions\)\s+3/);
    expect(text).toContain('witness.console.example');
    expect(text).not.toMatch(/witness\.console\.example\s+no/);
    expect(await checkPage(page, 'explorer-log')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it("verifies an action's receipt in the browser", async () => {
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByRole('link', { name: 'Batch 1' }).click();
    await page.getByRole('heading', { name: 'Batch 1' }).waitFor();
    const buttons = page.getByRole('button', { name: 'Verify receipt' });
    await expect.poll(() => buttons.count()).toBe(3);
    await buttons.first().click();
    await page
      .getByText(/^Verified: in the log of 3 actions, with 1 witness cosignature/)
      .waitFor();
    expect(await checkPage(page, 'explorer-receipt')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it("verifies the receipt of an action on the organization's private object, signed in", async () => {
    const { svc } = live;
    const owner = await ownerWithOrganization(live.origin, 'log-private', 'Private Log Org');
    const minter = await createSigner(svc, { orgId: owner.orgId });
    await fund(svc, owner.orgId, 10n ** 21n);
    const template = await createTemplate(svc, owner.orgId, { isPublic: false });
    // The log then holds six actions.
    const objectIds = await mintThreeIntoTheLog(svc, minter, template);
    // Not to be had without the organization's credential: the object is private.
    const logs = await call(svc, minter, 'GET', `/ebus/action-logs?object_id=${objectIds[0]!}`);
    const actionId = (logs as { action_logs: { id: string }[] }).action_logs[0]!.id;
    const anonymous = await svc.app.inject({
      method: 'GET',
      url: `/ebus/action-logs/${actionId}/receipt`,
    });
    expect(anonymous.statusCode).toBe(404);

    const signedIn = await browser.newPage();
    try {
      await signInWithPassword(signedIn.page, live.origin, owner.email, PASSWORD);
      await signedIn.page.getByRole('heading', { name: 'Overview' }).waitFor();
      await signedIn.page.goto(`${live.origin}/console/objects/${objectIds[0]!}`);
      const history = signedIn.page.getByTestId('object-history');
      await history.getByRole('button', { name: 'Verify receipt' }).click();
      await signedIn.page
        .getByText(/^Verified: in the log of 6 actions, with 1 witness cosignature/)
        .waitFor();
      expect(await checkPage(signedIn.page, 'object-receipt')).toEqual([]);
      expect(signedIn.problems).toEqual([]);
    } finally {
      await signedIn.context.close();
    }
  });
});
