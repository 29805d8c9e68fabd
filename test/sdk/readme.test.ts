import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import {
  createOnsClient,
  isOnsError,
  type StartAuthentication,
  type WebAuthnCredential,
} from '@ons/sdk';
import { newId } from '../../src/lib/ids.js';
import { signatureHeader } from '../../src/modules/webhooks/signing/sign.js';
import { createApiKey } from '../helpers/api-keys.js';
import {
  ACTION_FEE,
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
} from '../helpers/ebus.js';
import { signUp } from '../helpers/identity.js';
import { firstObject } from '../../sdk/examples/first-object.js';
import { listTemplates } from '../../sdk/examples/sign-in-api-key.js';
import { signIn } from '../../sdk/examples/sign-in-session.js';
import { mint } from '../../sdk/examples/sign-and-execute.js';
import { redeemWithPasskey } from '../../sdk/examples/passkey-signer.js';
import { webhookReceiver } from '../../sdk/examples/verify-webhook.js';
import { verifyHistory } from '../../sdk/examples/verify-history.js';
import { startLiveService, type LiveService } from './live-service.js';

const SDK = new URL('../../sdk/', import.meta.url);

let live: LiveService;
beforeAll(async () => {
  live = await startLiveService();
});
afterAll(async () => {
  await live.stop();
});

describe('sdk/README.md', () => {
  it('shows every example file exactly as it is', async () => {
    const readme = await readFile(new URL('README.md', SDK), 'utf8');
    const shown = [...readme.matchAll(/<!-- example: (\S+) -->\n\n```ts\n([\s\S]*?)\n```/g)];
    const files = (await readdir(new URL('examples/', SDK))).filter((f) => f.endsWith('.ts'));
    expect(shown.map((m) => m[1]).sort()).toEqual(files.map((f) => `examples/${f}`).sort());
    for (const [, file, code] of shown) {
      expect(code, file).toBe((await readFile(new URL(file!, SDK), 'utf8')).trimEnd());
    }
  });
});

describe('the README examples, run against a live service', () => {
  it('a first object: an API key and a crypto wallet linked to a member, nothing else', async () => {
    live.svc.clock.set(new Date()); // the action's expiry is real time
    const owner = await createSigner(live.svc);
    const member = await createPasskeySigner(live.svc, { orgId: owner.orgId, role: 'member' });
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const privateKey = generatePrivateKey();
    const linked = privateKeyToAccount(privateKey).address.toLowerCase();
    await live.svc.container.db.execute(sql`INSERT INTO credentials
      (id, wallet_id, type, external_id, created_at)
      VALUES (${newId('credential')}, ${member.walletId}, 'eoa', ${linked}, ${live.svc.clock.now()})`);
    // Only what the task needs: no organizations.read, no objects.read.
    const key = await createApiKey(live.svc, owner, ['templates.create', 'actions.create']);
    const out = await firstObject(live.baseUrl, key.secret, privateKey);
    expect(out.wallet).toBe(member.address);
    expect(out.object).toMatchObject({ custom: { seat: '12A' }, owner: member.address });
    expect(BigInt(out.feeWei)).toBeGreaterThan(0n);

    // The wallet's own crypto wallet works the same way.
    const ownKey = generatePrivateKey();
    const own = await createSigner(live.svc, { orgId: owner.orgId, privateKey: ownKey });
    expect((await firstObject(live.baseUrl, key.secret, ownKey)).wallet).toBe(own.address);

    // A crypto wallet that is no member's and linked to none: the error says how to fix it.
    const err: unknown = await firstObject(live.baseUrl, key.secret, generatePrivateKey()).catch(
      (e: unknown) => e,
    );
    expect(isOnsError(err) && [err.status, err.code]).toEqual([404, 5]);
    expect((err as Error).message).toMatch(/linked to none\. Link it to the acting wallet/);
    expect((err as Error).message).toContain('`wallet`');
  });

  it('sign in with an API key', async () => {
    const owner = await createSigner(live.svc);
    await createTemplate(live.svc, owner.orgId);
    const key = await createApiKey(live.svc, owner, ['templates.read']);
    expect(await listTemplates(live.baseUrl, key.secret)).toEqual({
      names: ['Ticket'],
      has_more: false,
    });
  });

  it('sign in with a session, refreshed by itself', async () => {
    const person = await signUp(live.svc);
    const { ons, me, saved } = await signIn(live.baseUrl, person.email, person.password);
    expect(me.email).toBe(person.email);
    live.svc.clock.advance(16 * 60_000); // the access token expires
    expect((await ons.GET('/wallets/me')).id).toBe(me.id);
    expect(saved).toEqual([ons.session]);
    live.svc.clock.set(new Date()); // back to real time, which the next examples' expiry uses
  });

  it('sign and execute actions with an EOA', async () => {
    const privateKey = generatePrivateKey();
    const owner = await createSigner(live.svc, { privateKey });
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(live.svc, owner.orgId);
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: { access_token: owner.accessToken, refresh_token: owner.refreshToken },
    });
    const out = await mint(ons, privateKey, templateId);
    expect(out.action).toMatchObject({ name: 'mint', nonce: 0, wallet: owner.address });
    expect(out.object.custom).toEqual({ seat: '12A' });
    expect(out.statuses).toEqual(['applied', 'applied']);
  });

  it('sign with a passkey', async () => {
    const owner = await createPasskeySigner(live.svc);
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(live.svc, owner.orgId);
    const ons = createOnsClient({
      baseUrl: live.baseUrl,
      session: { access_token: owner.accessToken, refresh_token: owner.refreshToken },
    });
    // A software authenticator stands in for the browser's.
    const startAuthentication: StartAuthentication = async ({ optionsJSON }) =>
      owner.authenticator.getAssertion(optionsJSON);
    const minted = await ons.actions.signAndExecute({
      name: 'mint',
      params: { template_id: templateId },
      signer: {
        kind: 'passkey',
        getAssertion: async ({ challenge }) =>
          owner.authenticator.getAssertion({ challenge }) as WebAuthnCredential,
      },
    });
    const redeemed = await redeemWithPasskey(ons, minted.object.id, startAuthentication);
    expect(redeemed.action).toMatchObject({ name: 'redeem', signature_type: 'webauthn' });
    expect(redeemed.object.is_redeemed).toBe(true);
  });

  it('verify a webhook', async () => {
    const key = 'a1'.repeat(32);
    const events: unknown[] = [];
    const server = webhookReceiver(key, (e) => events.push(e));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const body = JSON.stringify({ id: 'evt_1', type: 'action.executed', event: {} });
      // Signed as the service signs its deliveries (src/modules/webhooks/signing/sign.ts).
      const send = (payload: string, seconds = Math.floor(Date.now() / 1000)) =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-webhook-signature': signatureHeader([Buffer.from(key, 'hex')], seconds, body),
          },
          body: payload,
        });
      expect((await send(body)).status).toBe(200);
      expect(events).toEqual([JSON.parse(body)]);
      const tampered = await send(body.replace('evt_1', 'evt_2'));
      expect([tampered.status, await tampered.text()]).toEqual([401, 'signature']);
      const old = await send(body, Math.floor(Date.now() / 1000) - 600);
      expect([old.status, await old.text()]).toEqual([401, 'timestamp']);
      expect(events).toHaveLength(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('verify history', async () => {
    // The actions above are in batches once the sealer has run (by time: 10 s later).
    live.svc.clock.advance(11_000);
    for (let i = 0; i < 10 && (await live.svc.container.batches.sealer.tick()); i++);
    const dir = await mkdtemp(join(tmpdir(), 'ons-verify-'));
    try {
      const out = await verifyHistory(live.baseUrl, dir);
      expect(out.failed).toEqual([]);
      expect(out.ok).toBe(true);
      expect(out.exitCodes).toEqual([0, 0]);
      expect(out.summary).toMatch(/^\d+ checked, \d+ ok, 0 failed$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
