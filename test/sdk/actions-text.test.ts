import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  actionHash,
  buildActionText,
  canonicalJson,
  createOnsClient,
  webauthnChallenge,
} from '@ons/sdk';
import { ACTION_FEE, createSigner, createTemplate, fund } from '../helpers/ebus.js';
import { startLiveService, type LiveService } from './live-service.js';
import { funded, sessionClient } from './action-helpers.js';

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
  readFileSync(new URL('../vectors/action-text.json', import.meta.url), 'utf8'),
) as ActionVector;

let live: LiveService;
beforeAll(async () => {
  live = await startLiveService();
});
afterAll(async () => {
  await live.stop();
});

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
      const ons = sessionClient(live, owner);
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
    const { owner, ons } = await funded(live);
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
