import { main as onsVerify } from '@ons/sdk/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  httpSource,
  parseNote,
  verifyNetwork,
  type BatchRecord,
  type Source,
  type VerifyOptions,
} from '@ons/sdk';
import { generateSigner, noteSignatureLine, noteVerifierKey } from '../../sdk/src/log/signer.js';
import { buildNetwork, type VerifyNetwork } from './verify-fixture.js';

/**
 * What the verifier knows out of band — the network id, the batch key, the log's key — is
 * checked before anything the service serves is taken from it: a service serving another
 * network (its own id, key or log) gets one failed verdict, `network`, and nothing else.
 */

let net: VerifyNetwork;
let source: Source;
let pins: Required<Pick<VerifyOptions, 'network' | 'batchPublicKey' | 'logKey'>>;
beforeAll(async () => {
  net = await buildNetwork();
  source = httpSource(net.live.baseUrl);
  const answer = (await source.json<{
    network: string;
    batch_public_key: string;
    log: { verifier_key: string };
  }>('/public/network'))!;
  pins = {
    network: answer.network,
    batchPublicKey: answer.batch_public_key,
    logKey: answer.log.verifier_key,
  };
});
afterAll(async () => {
  await net?.live.stop();
});

/** `source` with one answer changed: JSON (`change`) or the bytes (`bytes`). */
function tampered(
  path: string,
  change: { json?: (v: Record<string, unknown>) => void; bytes?: (b: Uint8Array) => Uint8Array },
): Source {
  return {
    bytes: async (p) => {
      const b = await source.bytes(p);
      return p === path && b !== null && change.bytes ? change.bytes(b) : b;
    },
    json: async <T>(p: string) => {
      const v = await source.json<T>(p);
      if (p === path && v !== null) change.json?.(v as Record<string, unknown>);
      return v;
    },
  };
}

const only = (failed: string) => ({
  ok: false,
  verdicts: [{ item: 'network', ok: false, failed, reason: expect.any(String) as unknown }],
});

describe('pinned network id, batch key and log key', () => {
  it('match: one more verdict, first, and the rest as without pins', async () => {
    const plain = await verifyNetwork(source);
    const pinned = await verifyNetwork(source, pins);
    expect(pinned.ok).toBe(true);
    expect(pinned.verdicts[0]).toEqual({ item: 'network', ok: true });
    expect(pinned.verdicts.slice(1)).toEqual(plain.verdicts);
    // A key may be pinned in any case, with or without 0x.
    const upper = pins.batchPublicKey.slice(2).toUpperCase();
    expect((await verifyNetwork(source, { batchPublicKey: upper })).verdicts[0]).toEqual({
      item: 'network',
      ok: true,
    });
  });

  it('another network id: one failed verdict, nothing checked on it', async () => {
    expect(await verifyNetwork(source, { ...pins, network: 'ons-main' })).toEqual(only('network'));
  });

  it('another batch key: one failed verdict (a network signed by a key of its own)', async () => {
    const other = `0x${'ab'.repeat(32)}`;
    expect(await verifyNetwork(source, { batchPublicKey: other })).toEqual(
      only('batch_public_key'),
    );
    // The service publishing another key than the one pinned.
    const swapped = tampered('/public/network', {
      json: (v) => {
        v.batch_public_key = other;
      },
    });
    expect(await verifyNetwork(swapped, pins)).toEqual(only('batch_public_key'));
    await expect(verifyNetwork(source, { batchPublicKey: 'nope' })).rejects.toThrow(/64 hex/);
  });

  it('another log key, or a checkpoint it does not sign: log_key, log_checkpoint', async () => {
    const name = pins.logKey.split('+')[0]!;
    const impostor = generateSigner(name);
    expect(await verifyNetwork(source, { logKey: noteVerifierKey(impostor) })).toEqual(
      only('log_key'),
    );
    // The service publishes the pinned key but serves a checkpoint signed by another one.
    const resigned = tampered('/log/checkpoint', {
      bytes: (b) => {
        const note = parseNote(new TextDecoder().decode(b));
        const text = `${note.body}\n${noteSignatureLine(impostor, note.body)}\n`;
        return new TextEncoder().encode(text);
      },
    });
    expect(await verifyNetwork(resigned, pins)).toEqual(only('log_checkpoint'));
    await expect(verifyNetwork(source, { logKey: 'not a key' })).rejects.toThrow(/verifier key/);
  });

  it('a batch list that is not what the signed checkpoint names: log_checkpoint', async () => {
    const list = '/batches?order=asc&limit=100';
    const listed = (await source.json<{ batches: BatchRecord[] }>(list))!.batches;
    const last = Math.max(...listed.filter((b) => b.hash !== '').map((b) => b.sequence));
    // Its last sealed batch under another hash (a chain of its own from there on).
    const forked = tampered(list, {
      json: (v) => {
        const b = (v.batches as BatchRecord[]).find((x) => x.sequence === last)!;
        b.hash = `0x${'cd'.repeat(32)}`;
      },
    });
    expect(await verifyNetwork(forked, pins)).toEqual(only('log_checkpoint'));
    // Without the log key pinned, the forked batch is still caught, by its own checks.
    const unpinned = await verifyNetwork(forked, { network: pins.network });
    expect(unpinned.ok).toBe(false);
    expect(unpinned.verdicts[0]).toEqual({ item: 'network', ok: true });
  });

  it('a checkpoint hidden while batches are sealed: log_checkpoint, whatever the list says', async () => {
    const hidden: Source = {
      bytes: async (p) => (p === '/log/checkpoint' ? null : source.bytes(p)),
      json: async <T>(p: string) => {
        const v = await source.json<T>(p);
        // The list claims nothing is logged.
        if (p.startsWith('/batches?') && v !== null) {
          for (const b of (v as { batches: BatchRecord[] }).batches) b.log_tree_size = null;
        }
        return v;
      },
    };
    expect(await verifyNetwork(hidden, pins)).toEqual(only('log_checkpoint'));
  });

  it('the CLI pins with --network, --batch-key and --log-key', async () => {
    const lines: string[] = [];
    const out = { log: (l: string) => lines.push(l), isTTY: false };
    const flags = ['--network', pins.network, '--batch-key', pins.batchPublicKey];
    expect(
      await onsVerify(['check', net.live.baseUrl, ...flags, '--log-key', pins.logKey], out),
    ).toBe(0);
    expect(lines[0]).toBe('ok    network');
    expect(lines.at(-1)).toBe('20 checked, 20 ok, 0 failed');
    lines.length = 0;
    expect(await onsVerify(['check', net.live.baseUrl, '--network', 'ons-main'], out)).toBe(1);
    expect(lines).toEqual([
      'FAIL  network: network — the service is network "ons-test", not "ons-main"',
      '1 checked, 0 ok, 1 failed',
    ]);
  });
});
