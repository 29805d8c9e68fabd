import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base64url } from '../src/encoding.js';
import { actionTextOf, verifyActionSignature, type ActionContext } from '../src/verify/actions.js';
import { hex, sha256, utf8 } from '../src/verify/bytes.js';
import { publicActionContext } from '../src/verify/public-reads.js';
import type { Source } from '../src/verify/source.js';
import type { ActionRecord, PublicCredential } from '../src/verify/types.js';

/**
 * A dishonest service serving passkey actions whose assertions verify with the published
 * key but were not made as the service accepts them (src/lib/crypto/webauthn-assertion.ts):
 * another clientDataJSON type, another origin, in a frame of another origin, for another RP
 * id. The RP id and the origins are what `GET /public/network` → `webauthn` publishes.
 */

const NET = 'ons-test';
const RP_ID = 'localhost';
const ORIGIN = 'http://localhost:8080';
const WALLET = `0x${'ab'.repeat(20)}`;
const CREDENTIAL_ID = 'Y3JlZGVudGlhbA';
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const published: PublicCredential = {
  credential_id: CREDENTIAL_ID,
  wallet: WALLET,
  algorithm: { cose: -7, name: 'ES256' },
  public_key: publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
  when_created: '2025-01-01T00:00:00.000Z',
  when_removed: '',
};

interface Made {
  type?: string;
  origin?: string;
  rpId?: string;
  /** Added to clientDataJSON after the browser's members. */
  extra?: Record<string, unknown>;
}

/** An action signed with the passkey: its assertion made as `made` says (default: honestly). */
function passkeyAction(made: Made = {}): ActionRecord {
  const r = {
    id: 'act_1',
    hash: '',
    name: 'mint',
    wallet: WALLET,
    organization_id: 'org_1',
    signature_type: 'webauthn',
    signature: null as unknown,
    nonce: 0,
    params: { template_id: 'tpl_1' },
    expires: '2030-01-01T00:00:00.000Z',
    object_id: 'obj_1',
    template_id: 'tpl_1',
    template_version: null,
    fee_wei: '10',
    batch_id: null,
    log_index: null,
    when_created: '2025-01-01T00:00:00.000Z',
  } as unknown as ActionRecord;
  const text = actionTextOf(r, NET);
  r.hash = hex(sha256(utf8(text)));
  const clientData = Buffer.from(
    JSON.stringify({
      type: made.type ?? 'webauthn.get',
      challenge: base64url(sha256(utf8(text))),
      origin: made.origin ?? ORIGIN,
      crossOrigin: false,
      ...made.extra,
    }),
  );
  const authData = Buffer.concat([
    createHash('sha256')
      .update(made.rpId ?? RP_ID)
      .digest(),
    Buffer.from([0x05]), // UP | UV
    Buffer.from([0, 0, 0, 1]),
  ]);
  const clientDataHash = createHash('sha256').update(clientData).digest();
  const signature = sign('sha256', Buffer.concat([authData, clientDataHash]), privateKey);
  r.signature = {
    credential_id: CREDENTIAL_ID,
    authenticator_data: authData.toString('base64url'),
    client_data_json: clientData.toString('base64url'),
    signature: signature.toString('base64url'),
  };
  return r;
}

/** The service's public answers: its network (with `webauthn` unless null) and the key. */
function source(webauthn: { rp_id: string; origins: string[] } | null): Source {
  const routes: Record<string, unknown> = {
    '/public/network': {
      network: NET,
      batch_public_key: `0x${'00'.repeat(32)}`,
      ...(webauthn ? { webauthn } : {}),
    },
    [`/public/credentials/${CREDENTIAL_ID}`]: published,
  };
  return {
    json: <T>(path: string) => Promise.resolve((routes[path] ?? null) as T | null),
    bytes: () => Promise.resolve(null),
  };
}

const served = { rp_id: RP_ID, origins: [ORIGIN, 'https://app.localhost'] };
/** The context verifySealedBatch (the console) builds: it reads `webauthn` itself. */
const ctx = (webauthn: typeof served | null = served): ActionContext =>
  publicActionContext(source(webauthn), NET);

describe('a passkey assertion is checked against the published RP id and origins', () => {
  it('passes an honest assertion at any published origin, with nothing skipped', async () => {
    expect(await verifyActionSignature(passkeyAction(), ctx())).toEqual({
      item: 'action act_1',
      ok: true,
    });
    const other = passkeyAction({ origin: 'https://app.localhost' });
    expect(await verifyActionSignature(other, ctx())).toEqual({ item: 'action act_1', ok: true });
  });

  it('fails a clientDataJSON type other than webauthn.get (type)', async () => {
    const v = await verifyActionSignature(passkeyAction({ type: 'webauthn.create' }), ctx());
    expect(v).toMatchObject({ ok: false, failed: 'type' });
  });

  it('fails an origin the network does not publish (origin)', async () => {
    const v = await verifyActionSignature(passkeyAction({ origin: 'https://evil.example' }), ctx());
    expect(v).toMatchObject({ ok: false, failed: 'origin' });
    expect(v.reason).toContain('"https://evil.example"');
  });

  it('fails a cross-origin assertion, as the service does (origin)', async () => {
    const framed = passkeyAction({ extra: { crossOrigin: true } });
    expect(await verifyActionSignature(framed, ctx())).toMatchObject({ failed: 'origin' });
    const top = passkeyAction({ extra: { topOrigin: 'https://evil.example' } });
    expect(await verifyActionSignature(top, ctx())).toMatchObject({ failed: 'origin' });
  });

  it('fails an rpIdHash that is not SHA-256 of the published RP id (rp_id)', async () => {
    const v = await verifyActionSignature(passkeyAction({ rpId: 'evil.example' }), ctx());
    expect(v).toMatchObject({ ok: false, failed: 'rp_id' });
  });

  it('accepts the origins and RP ids the verifier adds (an operator changed them since)', async () => {
    const old = passkeyAction({ origin: 'https://old.example', rpId: 'old.example' });
    const added = publicActionContext(source(served), NET, {
      origins: ['https://old.example'],
      rpIds: ['old.example'],
    });
    expect(await verifyActionSignature(old, added)).toEqual({ item: 'action act_1', ok: true });
    // Added, not instead: the published ones still pass.
    expect(await verifyActionSignature(passkeyAction(), added)).toMatchObject({ ok: true });
  });

  it('says so when the network publishes none (a service from before): skipped', async () => {
    const v = await verifyActionSignature(
      passkeyAction({ origin: 'https://evil.example' }),
      ctx(null),
    );
    expect(v).toEqual({ item: 'action act_1', ok: true, skipped: ['origin', 'rp_id'] });
    // Given by the verifier, they are checked even then.
    const given = publicActionContext(source(null), NET, { origins: [ORIGIN], rpIds: [RP_ID] });
    expect(
      await verifyActionSignature(passkeyAction({ origin: 'https://evil.example' }), given),
    ).toMatchObject({ failed: 'origin' });
    expect(await verifyActionSignature(passkeyAction(), given)).toEqual({
      item: 'action act_1',
      ok: true,
    });
  });
});
