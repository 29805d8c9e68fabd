import { privateKeyToAccount } from 'viem/accounts';
import { verifyMessage } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserPasskey,
  buildActionText,
  createOnsClient,
  OnsError,
  webauthnChallenge,
  type ActionSigner,
  type StartAuthentication,
} from '@ons/sdk';
import { createApiKey } from '../helpers/api-keys.js';
import { ACTION_FEE, createPasskeySigner, createTemplate, fund } from '../helpers/ebus.js';
import { startLiveService, type LiveService } from './live-service.js';
import { funded, sessionClient, softPasskey } from './action-helpers.js';

let live: LiveService;
beforeAll(async () => {
  live = await startLiveService();
});
afterAll(async () => {
  await live.stop();
});

describe('signing and executing', () => {
  it('signs with a viem account and executes; the service logs the hash built here', async () => {
    const { owner, templateId, ons } = await funded(live);
    const signed = await ons.actions.sign({
      name: 'mint',
      params: { template_id: templateId, custom: { seat: '12A' } },
      signer: owner.account,
      maxFeeWei: ACTION_FEE.toString(),
    });
    expect(signed.body.max_fee_wei).toBe(ACTION_FEE.toString());
    expect(signed.action.nonce).toBe(0);
    expect(signed.action.wallet).toBe(owner.address);
    const ageMs = Date.parse(signed.action.expires) - Date.now();
    expect(ageMs).toBeGreaterThan(4 * 60_000);
    expect(ageMs).toBeLessThanOrEqual(5 * 60_000);
    expect(
      await verifyMessage({
        address: owner.account.address,
        message: signed.text,
        signature: (signed.body.signature as { signature: `0x${string}` }).signature,
      }),
    ).toBe(true);
    const applied = await ons.actions.execute(signed);
    expect(applied.action).toMatchObject({
      hash: signed.hash,
      nonce: 0,
      name: 'mint',
      signature_type: 'eoa',
      wallet: owner.address,
    });
    expect(applied.object.custom).toEqual({ seat: '12A' });

    // The next one picks the next nonce by itself.
    const again = await ons.actions.signAndExecute({
      name: 'redeem',
      params: { object_id: applied.object.id },
      signer: owner.account,
    });
    expect(again.action.nonce).toBe(1);
  });

  it('signs with a passkey through the signer interface and executes', async () => {
    const owner = await createPasskeySigner(live.svc, { role: 'owner' });
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(live.svc, owner.orgId);
    const ons = sessionClient(live, owner);
    const signer = softPasskey(owner);
    const signed = await ons.actions.sign({
      name: 'mint',
      params: { template_id: templateId },
      signer,
      passkey: { rpId: live.svc.config.webauthn.rpId },
    });
    expect(signer.asked).toEqual([
      {
        challenge: await webauthnChallenge(signed.text),
        rpId: live.svc.config.webauthn.rpId,
        userVerification: 'required',
      },
    ]);
    expect(signed.text).toBe(
      buildActionText({
        network: live.svc.config.networkId,
        organizationId: owner.orgId,
        wallet: owner.address,
        nonce: 0,
        name: 'mint',
        params: { template_id: templateId },
        expires: signed.action.expires,
      }),
    );
    expect(signed.body.signature.type).toBe('webauthn');
    const applied = await ons.actions.execute(signed);
    expect(applied.action).toMatchObject({
      hash: signed.hash,
      signature_type: 'webauthn',
      nonce: 0,
      wallet: owner.address,
    });
  });

  it('signs with browserPasskey, which asks @simplewebauthn/browser for a UV assertion', async () => {
    const owner = await createPasskeySigner(live.svc, { role: 'owner' });
    await fund(live.svc, owner.orgId, ACTION_FEE * 10n);
    const templateId = await createTemplate(live.svc, owner.orgId);
    const ons = sessionClient(live, owner);
    const asked: Parameters<StartAuthentication>[0][] = [];
    const startAuthentication: StartAuthentication = async (args) => {
      asked.push(args);
      return owner.authenticator.getAssertion(args.optionsJSON);
    };
    const signer = browserPasskey({
      rpId: live.svc.config.webauthn.rpId,
      credentialIds: [owner.authenticator.credentialId],
      timeoutMs: 60_000,
      startAuthentication,
    });
    const signed = await ons.actions.sign({
      name: 'mint',
      params: { template_id: templateId },
      signer,
    });
    expect(asked).toEqual([
      {
        optionsJSON: {
          challenge: signed.challenge,
          rpId: live.svc.config.webauthn.rpId,
          allowCredentials: [{ id: owner.authenticator.credentialId, type: 'public-key' }],
          userVerification: 'required',
          timeout: 60_000,
        },
      },
    ]);
    const applied = await ons.actions.execute(signed);
    expect(applied.action).toMatchObject({ hash: signed.hash, signature_type: 'webauthn' });
  });

  it('with an API key: the wallet is the EOA signer, the organization the key', async () => {
    const { owner, templateId } = await funded(live);
    const key = await createApiKey(live.svc, owner, ['actions.create']);
    const ons = createOnsClient({ baseUrl: live.baseUrl, apiKey: key.secret });
    const applied = await ons.actions.signAndExecute({
      name: 'mint',
      params: { template_id: templateId },
      signer: owner.account,
    });
    expect(applied.action).toMatchObject({ wallet: owner.address, nonce: 0 });

    // Issue 32: no permission beyond the task's (the organization comes from GET /ebus/nonce,
    // never GET /organizations), with wallet and nonce given too.
    const args = {
      name: 'mint' as const,
      params: { template_id: templateId },
      signer: owner.account,
    };
    const given = createOnsClient({ baseUrl: live.baseUrl, apiKey: key.secret });
    const signed = await given.actions.sign({ ...args, wallet: owner.address, nonce: 1 });
    expect(signed.text).toContain(owner.orgId);
    const named = createOnsClient({
      baseUrl: live.baseUrl,
      apiKey: key.secret,
      organizationId: owner.orgId,
    });
    expect((await named.actions.signAndExecute(args)).action.nonce).toBe(1);
  });

  it('surfaces a refused action as an OnsError and changes nothing', async () => {
    const { owner, templateId, ons } = await funded(live);
    const stranger = privateKeyToAccount(
      '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
    );
    const err = await ons.actions
      .signAndExecute({ name: 'mint', params: { template_id: templateId }, signer: stranger })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OnsError);
    expect((err as OnsError).status).toBeGreaterThanOrEqual(400);
    expect((err as OnsError).requestId).toMatch(/^req_/);
    // The wallet's nonce did not move.
    expect(await ons.GET('/ebus/nonce')).toEqual({
      address: owner.address,
      nonce: 0,
      organization_id: owner.orgId,
    });

    const late = await ons.actions
      .signAndExecute({
        name: 'mint',
        params: { template_id: templateId },
        signer: owner.account,
        expires: new Date(live.svc.clock.now().getTime() - 1000),
      })
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ name: 'OnsError', code: 9, status: 400 });
  });
});

describe('executeMany', () => {
  it('signs with consecutive nonces and sends one POST /ebus/actions/batch', async () => {
    const { owner, templateId, ons } = await funded(live);
    const signer: ActionSigner = owner.account;
    const results = await ons.actions.executeMany(
      [
        { name: 'mint', params: { template_id: templateId, custom: { n: 1 } } },
        { name: 'mint', params: { template_id: templateId, custom: { n: 2 } } },
        { name: 'mint', params: { template_id: templateId, custom: { n: 3 } } },
      ],
      { signer },
    );
    expect(results.map((r) => [r.status, r.action?.nonce, r.object?.custom])).toEqual([
      ['applied', 0, { n: 1 }],
      ['applied', 1, { n: 2 }],
      ['applied', 2, { n: 3 }],
    ]);
    expect(await ons.GET('/ebus/nonce')).toEqual({
      address: owner.address,
      nonce: 3,
      organization_id: owner.orgId,
    });

    // From a given nonce, signed first and sent as they are; a refused item is reported.
    const signed = await ons.actions.signMany(
      [
        { name: 'redeem', params: { object_id: results[0]!.object!.id } },
        { name: 'redeem', params: { object_id: 'obj_01JD00000000000000000000ZZ' } },
      ],
      { signer, nonce: 3 },
    );
    expect(signed.map((s) => s.action.nonce)).toEqual([3, 4]);
    const second = await ons.actions.executeMany(signed);
    expect(second[0]).toMatchObject({ status: 'applied', action: { nonce: 3, name: 'redeem' } });
    expect(second[1]).toMatchObject({ status: 'refused', error: { code: 5 } });
  });

  it('sends nothing for no actions and refuses more than 100 as the service does', async () => {
    const { owner, templateId, ons } = await funded(live);
    expect(await ons.actions.signMany([], { signer: owner.account })).toEqual([]);
    const many = Array.from({ length: 101 }, () => ({
      name: 'mint' as const,
      params: { template_id: templateId },
    }));
    await expect(ons.actions.executeMany(many, { signer: owner.account })).rejects.toMatchObject({
      code: 3,
      status: 400,
    });
  });
});
