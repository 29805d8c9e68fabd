import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { privateKeyToAccount } from 'viem/accounts';
import { verifyMessage } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionHash,
  browserPasskey,
  buildActionText,
  canonicalJson,
  createOnsClient,
  OnsError,
  webauthnChallenge,
  type ActionSigner,
  type OnsClient,
  type PasskeySigner,
  type StartAuthentication,
  type WebAuthnCredential,
} from '@ons/sdk';
import { createApiKey } from '../../test/helpers/api-keys.js';
import {
  ACTION_FEE,
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  type EoaSigner,
  type PasskeySigner as TestPasskeyMember,
} from '../../test/helpers/ebus.js';
import { startLiveService, type LiveService } from './live-service.js';

interface ActionVector {
  private_key: `0x${string}`;
  address: string;
  action: {
    wallet: string;
    name: 'transfer';
    params: Record<string, unknown>;
    nonce: number;
    expires: string;
  };
  network: string;
  organization_id: string;
  text: string;
  eip191_signature: string;
  hash: string;
  webauthn_challenge: string;
}

const vector = JSON.parse(
  readFileSync(new URL('../../test/vectors/action-text.json', import.meta.url), 'utf8'),
) as ActionVector;

let live: LiveService;
beforeAll(async () => {
  live = await startLiveService();
});
afterAll(async () => {
  await live.stop();
});

const sessionClient = (m: { accessToken: string; refreshToken: string }) =>
  createOnsClient({
    baseUrl: live.baseUrl,
    session: { access_token: m.accessToken, refresh_token: m.refreshToken },
  });

async function funded(): Promise<{ owner: EoaSigner; templateId: string; ons: OnsClient }> {
  const owner = await createSigner(live.svc, { role: 'owner' });
  await fund(live.svc, owner.orgId, ACTION_FEE * 100n);
  const templateId = await createTemplate(live.svc, owner.orgId);
  return { owner, templateId, ons: sessionClient(owner) };
}

/** The SoftAuthenticator the service's passkey tests use, as the SDK's signer interface. */
function softPasskey(member: TestPasskeyMember): PasskeySigner & { asked: unknown[] } {
  const asked: unknown[] = [];
  return {
    kind: 'passkey',
    asked,
    async getAssertion(request) {
      asked.push(request);
      const { allowCredentials, ...rest } = request;
      return member.authenticator.getAssertion({
        ...rest,
        ...(allowCredentials ? { allowCredentials: allowCredentials.map((id) => ({ id })) } : {}),
      }) as WebAuthnCredential;
    },
  };
}

describe('the action text, built locally', () => {
  it('is the shared vector byte for byte, with its hash, challenge and EIP-191 signature', async () => {
    const text = buildActionText({
      network: vector.network,
      organizationId: vector.organization_id,
      ...vector.action,
    });
    expect(text).toBe(vector.text);
    expect(await actionHash(text)).toBe(vector.hash);
    expect(await webauthnChallenge(text)).toBe(vector.webauthn_challenge);

    const account = privateKeyToAccount(vector.private_key);
    const offline = createOnsClient({ baseUrl: 'http://127.0.0.1:9' }); // never called
    const signed = await offline.actions.sign({
      ...vector.action,
      signer: account,
      network: vector.network,
      organizationId: vector.organization_id,
    });
    expect(signed.text).toBe(vector.text);
    expect(signed.hash).toBe(vector.hash);
    expect(signed.challenge).toBe(vector.webauthn_challenge);
    expect(signed.body).toEqual({
      action: vector.action,
      signature: { type: 'eoa', signature: vector.eip191_signature },
    });
  });

  it('writes the wallet lowercase and refuses fields that would add a line, or a bad nonce', () => {
    const base = {
      network: 'n',
      organizationId: 'org_1',
      wallet: '0xABCDEF0000000000000000000000000000000001',
      nonce: 0,
      name: 'redeem',
      params: { object_id: 'obj_1' },
      expires: new Date('2026-01-01T00:00:00Z'),
    };
    expect(buildActionText(base)).toBe(
      [
        'ONS action v1',
        'network: n',
        'organization: org_1',
        'wallet: 0xabcdef0000000000000000000000000000000001',
        'nonce: 0',
        'action: redeem',
        'params: {"object_id":"obj_1"}',
        'expires: 2026-01-01T00:00:00.000Z',
      ].join('\n'),
    );
    expect(buildActionText({ ...base, nonce: 12n })).toContain('\nnonce: 12\n');
    for (const bad of [
      { network: 'a\nb' },
      { organizationId: 'org\r' },
      { name: 'x\u2028y' },
      { expires: '2026\n' },
    ]) {
      expect(() => buildActionText({ ...base, ...bad })).toThrow(/line break/);
    }
    for (const nonce of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, -1n]) {
      expect(() => buildActionText({ ...base, nonce })).toThrow(/nonce/);
    }
  });

  it('writes params as RFC 8785 canonical JSON', () => {
    expect(canonicalJson({ b: 1, a: [true, null, 'x'], c: { z: 1e21, y: 0.1, x: -0 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"c":{"x":0,"y":0.1,"z":1e+21}}',
    );
    // Keys sort by UTF-16 code units: "\u20ac" (€) after "\ud83d\ude00" would be wrong.
    expect(canonicalJson({ '€': 1, '😀': 2, a: 3, '\r': 4 })).toBe('{"\\r":4,"a":3,"€":1,"😀":2}');
    expect(canonicalJson({ u: undefined, f: () => 1, d: new Date(0), l: [undefined] })).toBe(
      '{"d":"1970-01-01T00:00:00.000Z","l":[null]}',
    );
    expect(canonicalJson('\u2028\u0007"')).toBe('"\u2028\\u0007\\""');
    for (const bad of [NaN, Infinity, 1n, '\ud800', undefined]) {
      expect(() => canonicalJson(bad)).toThrow(/canonicalJson/);
    }
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow(/cycle/);
  });
});

describe('the action text against the live POST /ebus/prepare', () => {
  it('is the same bytes for the vector, and the service executes the vector signature the SDK made', async () => {
    const svc = live.svc;
    svc.clock.set('2026-11-30T23:50:00.000Z');
    try {
      const now = svc.clock.now();
      await svc.container.db
        .execute(sql`INSERT INTO organizations (id, name, created_at, updated_at)
        VALUES (${vector.organization_id}, 'Vector Org', ${now}, ${now})`);
      const owner = await createSigner(svc, {
        orgId: vector.organization_id,
        privateKey: vector.private_key,
      });
      await fund(svc, owner.orgId, ACTION_FEE * 2n);
      const templateId = await createTemplate(svc, owner.orgId);
      const ons = sessionClient(owner);
      await svc.container.db.execute(
        sql`UPDATE wallets SET next_nonce = 6 WHERE id = ${owner.walletId}`,
      );
      const minted = await ons.actions.signAndExecute({
        name: 'mint',
        params: { template_id: templateId },
        signer: owner.account,
        // The service's clock is set back here; the default (five minutes from now) is not.
        expires: new Date(svc.clock.now().getTime() + 60_000),
      });
      await svc.container.db.execute(sql`
        UPDATE objects SET id = ${vector.action.params.object_id as string} WHERE id = ${minted.object.id}`);

      const prepared = await ons.POST('/ebus/prepare', {
        body: { action: { name: 'transfer', params: vector.action.params } },
      });
      expect(prepared.text).toBe(vector.text);
      const signed = await ons.actions.sign({
        name: 'transfer',
        params: vector.action.params,
        signer: owner.account,
        expires: prepared.action.expires,
      });
      expect(signed.text).toBe(prepared.text);
      expect(signed.hash).toBe(prepared.hash);
      expect(signed.challenge).toBe(prepared.challenge);
      expect(signed.body.signature).toEqual({ type: 'eoa', signature: vector.eip191_signature });
      const applied = await ons.actions.execute(signed);
      expect(applied.action).toMatchObject({ hash: vector.hash, nonce: 7, name: 'transfer' });
      expect(applied.object.owner).toBe(vector.action.params.to);
    } finally {
      svc.clock.set(new Date());
    }
  });

  it('is the same bytes as prepare for params that test the canonical form', async () => {
    const { owner, ons } = await funded();
    const awkward: Record<string, unknown>[] = [
      { object_id: 'obj_1', custom: { b: 1, a: 2, '€': 3, '😀': 4, ａ: 5, '\u007f': 6 } },
      { object_id: 'obj_1', custom: { n: [1e21, 1e-7, 0.1, -0, 123456789.125, 2 ** 53 - 1] } },
      { object_id: 'obj_1', custom: { s: 'line\nbreak "q" \\ \u2028 \u0001 é 😀 </script>' } },
      { object_id: 'obj_1', custom: { deep: { z: [{ y: { x: [] } }], a: {} }, t: true, f: null } },
      { object_id: 'obj_1', metadata: { name: 'Ünïcödé', description: 'tab\there', edition: 7 } },
    ];
    for (const params of awkward) {
      const prepared = await ons.POST('/ebus/prepare', {
        body: { action: { name: 'update', params } },
      });
      const local = await ons.actions.prepareText({
        name: 'update',
        params,
        expires: prepared.action.expires,
      });
      expect(local.text).toBe(prepared.text);
      expect(local.hash).toBe(prepared.hash);
      expect(local.challenge).toBe(prepared.challenge);
      // As JSON: -0 is sent as 0, and both texts say 0.
      expect(JSON.parse(JSON.stringify(local.action))).toEqual(prepared.action);
      expect(local.action.wallet).toBe(owner.address);
    }
  });
});

describe('signing and executing', () => {
  it('signs with a viem account and executes; the service logs the hash built here', async () => {
    const { owner, templateId, ons } = await funded();
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
    const ons = sessionClient(owner);
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
    const ons = sessionClient(owner);
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
    const { owner, templateId } = await funded();
    const key = await createApiKey(live.svc, owner, ['actions.create', 'organizations.read']);
    const ons = createOnsClient({ baseUrl: live.baseUrl, apiKey: key.secret });
    const applied = await ons.actions.signAndExecute({
      name: 'mint',
      params: { template_id: templateId },
      signer: owner.account,
    });
    expect(applied.action).toMatchObject({ wallet: owner.address, nonce: 0 });

    // A key that may not list its organization is told to name it.
    const narrow = await createApiKey(live.svc, owner, ['actions.create']);
    const keyOnly = createOnsClient({ baseUrl: live.baseUrl, apiKey: narrow.secret });
    const args = {
      name: 'mint' as const,
      params: { template_id: templateId },
      signer: owner.account,
    };
    await expect(keyOnly.actions.sign(args)).rejects.toMatchObject({ status: 403, code: 7 });
    const named = createOnsClient({
      baseUrl: live.baseUrl,
      apiKey: narrow.secret,
      organizationId: owner.orgId,
    });
    expect((await named.actions.signAndExecute(args)).action.nonce).toBe(1);
  });

  it('surfaces a refused action as an OnsError and changes nothing', async () => {
    const { owner, templateId, ons } = await funded();
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
    expect(await ons.GET('/ebus/nonce')).toEqual({ address: owner.address, nonce: 0 });

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
    const { owner, templateId, ons } = await funded();
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
    expect(await ons.GET('/ebus/nonce')).toEqual({ address: owner.address, nonce: 3 });

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
    const { owner, templateId, ons } = await funded();
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
