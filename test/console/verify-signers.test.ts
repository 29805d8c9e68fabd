import { sql } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { httpSource, verifySealedBatch, type BatchRecord } from '@ons/sdk';
import { newId } from '../../src/lib/ids.js';
import {
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
} from '../helpers/ebus.js';
import {
  checkPage,
  describeWithChromium,
  launchBrowser,
  startConsoleService,
  type ConsoleBrowser,
  type ConsoleService,
} from './harness.js';

/**
 * Issue 32 item 4: "Verify in the browser" never cries wolf. One sealed batch holds actions
 * signed by a passkey, by a wallet's own key and by a crypto wallet linked to a wallet; the
 * browser and the SDK (the one entry point both use, verifySealedBatch) verify it, and one
 * changed byte of each signature fails that signature's check and only it.
 */
describeWithChromium('console: verifying every kind of signer', () => {
  let live: ConsoleService;
  let browser: ConsoleBrowser;
  const signed: Record<'passkey' | 'own' | 'linked', string> = { passkey: '', own: '', linked: '' };

  beforeAll(async () => {
    live = await startConsoleService({
      env: { BATCH_MAX_ACTIONS: '10', BATCH_MAX_SECONDS: '10' },
    });
    const { svc } = live;
    const owner = await createSigner(svc);
    const member = await createPasskeySigner(svc, { orgId: owner.orgId });
    // A crypto wallet linked to the member's wallet (as "Link a crypto wallet" leaves it).
    const linked = privateKeyToAccount(generatePrivateKey());
    await svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, created_at)
      VALUES (${newId('credential')}, ${member.walletId}, 'eoa',
        ${linked.address.toLowerCase()}, ${svc.clock.now()})`);
    svc.clock.advance(1000);
    await fund(svc, owner.orgId, 10n ** 21n);
    const template = await createTemplate(svc, owner.orgId);
    const nonces = new Map<string, number>();
    const run = async (
      who: 'own' | 'passkey' | 'linked',
      name: string,
      params: Record<string, unknown>,
    ) => {
      const wallet = who === 'own' ? owner : member;
      const a = { name, params, nonce: nonces.get(wallet.walletId) ?? 0 };
      nonces.set(wallet.walletId, a.nonce + 1);
      const body =
        who === 'own'
          ? await signEoa(svc, owner, a)
          : who === 'linked'
            ? await signEoa(svc, { ...member, account: linked }, { ...a, wallet: member.address })
            : signPasskey(svc, member, a);
      const res = await svc.app.inject({
        method: 'POST',
        url: '/ebus/execute',
        headers: wallet.headers,
        payload: body,
      });
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.body}`);
      svc.clock.advance(1000);
      return res.json<{ object: { id: string }; action: { id: string } }>();
    };
    const minted = await run('own', 'mint', { template_id: template });
    signed.own = minted.action.id;
    await run('own', 'transfer', { object_id: minted.object.id, to: member.address });
    signed.linked = (
      await run('linked', 'update', { object_id: minted.object.id, custom: { seat: '2B' } })
    ).action.id;
    signed.passkey = (await run('passkey', 'mint', { template_id: template })).action.id;
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
    svc.clock.advance(11_000);
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await live?.stop();
  });

  const batchOne = async (): Promise<BatchRecord> => {
    const res = await fetch(`${live.origin}/batches?order=asc&limit=1`);
    return ((await res.json()) as { batches: BatchRecord[] }).batches[0]!;
  };

  /** Opens batch 1 and verifies it; `tamper` flips a byte of that action's signature. */
  const verifyInBrowser = async (tamper?: string): Promise<Page> => {
    const tab = await browser.newPage();
    if (tamper) {
      await tab.page.route('**/public/objects/*/history*', async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as {
          action_logs: { id: string; signature: string | { signature: string } }[];
        };
        for (const a of body.action_logs) {
          if (a.id !== tamper) continue;
          if (typeof a.signature === 'string') {
            // The last hex digit of r: still a well-formed 65-byte signature.
            const i = 10;
            const c = a.signature[i] === '0' ? '1' : '0';
            a.signature = a.signature.slice(0, i) + c + a.signature.slice(i + 1);
          } else {
            const s = a.signature.signature;
            a.signature.signature = `${s.slice(0, 8)}${s[8] === 'A' ? 'B' : 'A'}${s.slice(9)}`;
          }
        }
        await route.fulfill({ response: res, json: body });
      });
    }
    const { page } = tab;
    await page.goto(`${live.origin}/console/explorer`);
    await page.getByRole('link', { name: 'Batch 1' }).click();
    await page.getByRole('button', { name: 'Verify in the browser' }).click();
    await page
      .getByText(tamper ? 'Not verified: a check failed' : 'Verified')
      .first()
      .waitFor();
    expect(tab.problems).toEqual([]);
    return page;
  };

  it('verifies a batch signed by a passkey, a wallet’s own key and a linked crypto wallet', async () => {
    const page = await verifyInBrowser();
    await page.getByText('Verified: every check passed.').waitFor();
    const verdict = page.getByTestId('verdict');
    const lines = await verdict.locator('tbody tr').allInnerTexts();
    const signatures = lines.filter((l) => l.includes('signature'));
    expect(signatures).toHaveLength(4);
    expect(signatures.every((l) => l.trim().endsWith('passed'))).toBe(true);
    expect(signatures.find((l) => l.includes(signed.linked))).toContain('crypto wallet');
    expect(signatures.find((l) => l.includes(signed.passkey))).toContain('passkey');
    expect(await verdict.locator('tr.check-failed').count()).toBe(0);
    expect(await checkPage(page, 'explorer-batch-signers')).toEqual([]);
    await page.context().close();
  });

  for (const who of ['passkey', 'own', 'linked'] as const) {
    it(`fails on one changed byte of the ${who} signature, naming it`, async () => {
      const page = await verifyInBrowser(signed[who]);
      const failed = await page.locator('tr.check-failed').allInnerTexts();
      expect(failed).toHaveLength(1);
      expect(failed[0]).toContain(signed[who]);
      expect(failed[0]).toContain('signature');
      await page.context().close();
    });
  }

  it('the SDK’s verifySealedBatch gives the same verdicts (the entry point the console calls)', async () => {
    const batch = await batchOne();
    const report = await verifySealedBatch(httpSource(live.origin), batch);
    expect(report.ok).toBe(true);
    const kinds = report.lines
      .filter((l) => l.kind === 'signature')
      .map((l) => [l.id, l.detail, l.verdict.ok]);
    expect(kinds).toContainEqual([signed.linked, 'eoa', true]);
    expect(kinds).toContainEqual([signed.own, 'eoa', true]);
    expect(kinds).toContainEqual([signed.passkey, 'webauthn', true]);
  });
});
