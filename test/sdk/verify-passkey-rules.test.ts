import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main as onsVerify } from '@ons/sdk/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpSource, verifyNetwork, type ActionRecord, type Source } from '@ons/sdk';
import type { SoftOverrides } from '../support/soft-authenticator.js';
import { buildNetwork, type VerifyNetwork } from './verify-fixture.js';

/**
 * verifyNetwork checks each passkey action's assertion against the RP id and origins
 * `GET /public/network` publishes (`webauthn`), over the live service with real passkeys: a
 * dishonest service serving an assertion the passkey really made, but at another origin, for
 * another RP id or of another type, is caught.
 */

let net: VerifyNetwork;
let source: Source;
beforeAll(async () => {
  net = await buildNetwork();
  source = httpSource(net.live.baseUrl);
});
afterAll(async () => {
  await net?.live.stop();
});

const historyPath = () => `/public/objects/${net.publicA}/history?order=asc&limit=100`;

/** `source` with the JSON answer of `path` changed. */
function tampered(path: string, change: (value: Record<string, unknown>) => void): Source {
  return {
    bytes: (p) => source.bytes(p),
    json: async <T>(p: string) => {
      const v = await source.json<T>(p);
      if (p === path && v !== null) change(v as Record<string, unknown>);
      return v;
    },
  };
}

/** The history of A with its passkey action (the drop) signed again as `overrides` say. */
function resigned(overrides: SoftOverrides): Source {
  return tampered(historyPath(), (v) => {
    const drop = (v.action_logs as ActionRecord[]).find((a) => a.name === 'drop')!;
    const old = drop.signature as Exclude<ActionRecord['signature'], string>;
    const challenge = JSON.parse(Buffer.from(old.client_data_json, 'base64url').toString()) as {
      challenge: string;
    };
    // The passkey itself signs: its published key verifies the signature.
    const c = net.passkey.authenticator.getAssertion(challenge, overrides);
    drop.signature = {
      credential_id: old.credential_id,
      authenticator_data: c.response.authenticatorData,
      client_data_json: c.response.clientDataJSON,
      signature: c.response.signature,
    };
  });
}

const failures = (verdicts: { ok: boolean; item: string; failed?: string }[]) =>
  verdicts.filter((v) => !v.ok).map((v) => `${v.item}: ${v.failed}`);

const dropId = async () =>
  (await source.json<{ action_logs: ActionRecord[] }>(historyPath()))!.action_logs.find(
    (a) => a.name === 'drop',
  )!.id;

describe('passkey assertions against the published webauthn RP id and origins', () => {
  it('checks every passkey action of the live network: none fails, none is skipped', async () => {
    const report = await verifyNetwork(source);
    expect(failures(report.verdicts)).toEqual([]);
    expect(report.verdicts.filter((v) => v.skipped !== undefined)).toEqual([]);
    // Re-signed honestly, the history's copy passes too.
    const again = await verifyNetwork(resigned({}), { objects: [net.publicA] });
    expect(failures(again.verdicts)).toEqual([]);
  });

  it('fails an assertion of another type, origin or RP id, each named', async () => {
    const id = await dropId();
    const run = async (o: SoftOverrides) =>
      failures((await verifyNetwork(resigned(o), { objects: [net.publicA] })).verdicts);
    expect(await run({ type: 'webauthn.create' })).toEqual([`action ${id}: type`]);
    expect(await run({ origin: 'https://evil.localhost' })).toEqual([`action ${id}: origin`]);
    expect(await run({ rpId: 'evil.example' })).toEqual([`action ${id}: rp_id`]);
  });

  it('after the operator changed WEBAUTHN_ORIGINS, old actions pass with their origin added', async () => {
    const moved = tampered('/public/network', (v) => {
      v.webauthn = { rp_id: 'localhost', origins: ['https://new.localhost'] };
    });
    const passkeyActions = (await verifyNetwork(moved)).verdicts.filter((v) => !v.ok);
    // The passkey's 3 actions (drop on A, mint and redeem of B), each at the old origin.
    expect(passkeyActions.map((v) => v.failed)).toEqual(['origin', 'origin', 'origin']);
    const old = net.live.svc.config.webauthn.origins;
    expect(failures((await verifyNetwork(moved, { origins: old })).verdicts)).toEqual([]);
    // The CLI takes them as --origin: the saved network answer says the origins moved.
    const dir = await mkdtemp(join(tmpdir(), 'ons-verify-'));
    try {
      const lines: string[] = [];
      const out = { log: (l: string) => lines.push(l), isTTY: false };
      expect(await onsVerify(['download', net.live.baseUrl, dir], out)).toBe(0);
      const file = join(dir, `${encodeURIComponent('/public/network')}.bin`);
      const answer = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      answer.webauthn = { rp_id: 'localhost', origins: ['https://new.localhost'] };
      await writeFile(file, JSON.stringify(answer));
      lines.length = 0;
      expect(await onsVerify(['check', dir], out)).toBe(1);
      expect(lines.filter((l) => l.startsWith('FAIL')).length).toBe(3);
      expect(
        lines.filter((l) => l.startsWith('FAIL')).every((l) => l.includes(': origin — ')),
      ).toBe(true);
      expect(await onsVerify(['check', dir, '--origin', ...old], out)).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says which checks it could not make when the network publishes no webauthn', async () => {
    const before = tampered('/public/network', (v) => {
      delete v.webauthn;
    });
    const report = await verifyNetwork(before);
    expect(report.ok).toBe(true);
    const skipped = report.verdicts.filter((v) => v.skipped !== undefined);
    expect(skipped.map((v) => v.skipped)).toEqual([
      ['origin', 'rp_id'],
      ['origin', 'rp_id'],
      ['origin', 'rp_id'],
    ]);
  });
});
