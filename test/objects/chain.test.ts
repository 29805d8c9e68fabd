import { sql } from 'drizzle-orm';
import { createHash } from 'node:crypto';
import ngeohash from 'ngeohash';
import { describe, expect, it } from 'vitest';
import { useTestService } from '../helpers/harness.js';
import {
  createSigner,
  createTemplate,
  fund,
  signEoa,
  type EoaSigner,
  ACTION_FEE,
} from '../helpers/ebus.js';

/**
 * Issue 6 acceptance 3: an object's hashes can be recomputed by anyone from what the API
 * answers, and its integrity chain walked back to the mint. Everything below is computed
 * here, independently of src/ (own canonical JSON, own SHA-256), from docs/objects.md.
 */

const GENESIS = '0x' + '0'.repeat(64);
const FEE = ACTION_FEE;

/** RFC 8785 canonical JSON for the values an object holds (no floats beyond ES6 form). */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
}
const H = (v: unknown) => '0x' + createHash('sha256').update(canonical(v), 'utf8').digest('hex');

type Loc = { latitude: number; longitude: number; geo_hash: string } | null;
interface State {
  owner: string;
  location: Loc;
  custom: Record<string, unknown>;
  metadata: Record<string, unknown>;
  is_redeemed: boolean;
  is_dropped: boolean;
}
interface LogEntry {
  id: string;
  hash: string;
  name: string;
  wallet: string;
  params: Record<string, unknown>;
  when_created: string;
}

function hashesOf(s: State, faces: unknown[], prev: string, actionHash: string) {
  const custom_hash = H(s.custom);
  const content_hash = H({ metadata: s.metadata, faces });
  const state_hash = H({
    owner: s.owner,
    location: s.location,
    custom_hash,
    is_redeemed: s.is_redeemed,
    is_dropped: s.is_dropped,
  });
  const integrity_hash = H({
    prev_integrity_hash: prev,
    state_hash,
    content_hash,
    action_hash: actionHash,
  });
  return { custom_hash, content_hash, state_hash, integrity_hash };
}

const locOf = (p: { latitude: number; longitude: number }): Loc => ({
  latitude: p.latitude,
  longitude: p.longitude,
  geo_hash: ngeohash.encode(p.latitude, p.longitude, 9),
});

/** The state after each logged action, replayed from the action log (docs/objects.md rules). */
function replay(log: LogEntry[], template: Record<string, unknown>): State[] {
  const states: State[] = [];
  for (const a of log) {
    const prev = states.at(-1);
    const p = a.params;
    let s: State;
    if (a.name === 'mint') {
      s = {
        owner: ((p.owner as string | undefined) ?? a.wallet).toLowerCase(),
        location: p.location ? locOf(p.location as { latitude: number; longitude: number }) : null,
        custom: (p.custom as Record<string, unknown> | undefined) ?? {},
        metadata: {
          name: template.name,
          description: template.description,
          category: template.category,
          image: null,
          edition: 1,
          ...(p.metadata as Record<string, unknown> | undefined),
        },
        is_redeemed: false,
        is_dropped: false,
      };
    } else {
      if (!prev) throw new Error(`${a.name} before mint`);
      s = { ...prev };
      if (a.name === 'transfer') s.owner = (p.to as string).toLowerCase();
      if (a.name === 'update') {
        if (p.custom) s.custom = p.custom as Record<string, unknown>;
        if (p.metadata) s.metadata = { ...prev.metadata, ...p.metadata };
      }
      if (a.name === 'drop') {
        s.is_dropped = true;
        s.location = locOf(p.location as { latitude: number; longitude: number });
      }
      if (a.name === 'pickup') {
        s.owner = a.wallet;
        s.is_dropped = false;
      }
      if (a.name === 'redeem') s.is_redeemed = true;
    }
    states.push(s);
  }
  return states;
}

const svc = useTestService();

async function act(signer: EoaSigner, name: string, params: Record<string, unknown>) {
  const nonceRes = await svc.app.inject({
    method: 'GET',
    url: '/ebus/nonce',
    headers: signer.headers,
  });
  const body = await signEoa(svc, signer, { name, params, nonce: nonceRes.json().nonce });
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/execute',
    headers: signer.headers,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  svc.clock.advance(1000); // one action per second: the log's time order is the apply order
  return res.json();
}

describe('an object minted and moved through the event bus', () => {
  it('has hashes anyone can recompute and an integrity chain that walks back to the mint', async () => {
    const alice = await createSigner(svc, { role: 'owner' });
    const bob = await createSigner(svc, { orgId: alice.orgId, role: 'member' });
    await fund(svc, alice.orgId, FEE * 100n);
    const templateId = await createTemplate(svc, alice.orgId, {
      faces: [{ id: 'front', url: 'https://x.test/front.png', config: { w: 2 }, content: 'é' }],
    });

    const minted = await act(alice, 'mint', {
      template_id: templateId,
      custom: { seat: 12, row: 'B' },
      metadata: { name: 'Concert ticket' },
      location: { latitude: 48.8566, longitude: 2.3522 },
      collection_id: 'col-chain',
    });
    const id = minted.object.id as string;
    await act(alice, 'transfer', { object_id: id, to: bob.address });
    await act(bob, 'update', {
      object_id: id,
      custom: { seat: 14, row: 'C', note: 'moved' },
      metadata: { description: 'Upgraded' },
    });
    await act(bob, 'drop', {
      object_id: id,
      location: { latitude: -33.8688, longitude: 151.2093 },
    });
    await act(alice, 'pickup', { object_id: id });
    await act(alice, 'transfer', { object_id: id, to: bob.address });

    const got = await svc.app.inject({
      method: 'GET',
      url: `/objects/${id}`,
      headers: alice.headers,
    });
    expect(got.statusCode, got.body).toBe(200);
    const record = got.json();
    expect(record).toMatchObject({
      owner: bob.address,
      collection_id: 'col-chain',
      nonce: 5,
      version: 6,
      is_dropped: false,
      custom: { seat: 14, row: 'C', note: 'moved' },
    });

    const tpl = await svc.app.inject({
      method: 'GET',
      url: `/templates/${templateId}`,
      headers: alice.headers,
    });
    expect(tpl.statusCode, tpl.body).toBe(200);
    const template = tpl.json();
    const logs = await svc.app.inject({
      method: 'GET',
      url: `/ebus/action-logs?object_id=${id}&order=asc&limit=100`,
      headers: alice.headers,
    });
    expect(logs.statusCode, logs.body).toBe(200);
    const log = logs.json().action_logs as LogEntry[];
    expect(log.map((a) => a.name)).toEqual([
      'mint',
      'transfer',
      'update',
      'drop',
      'pickup',
      'transfer',
    ]);

    // The newest state, recomputed from the record alone (and the template's faces).
    const newest = log.at(-1)!;
    const fromRecord = hashesOf(
      {
        owner: record.owner,
        location: record.location,
        custom: record.custom,
        metadata: record.metadata,
        is_redeemed: record.is_redeemed,
        is_dropped: record.is_dropped,
      },
      template.faces,
      record.prev_integrity_hash,
      newest.hash,
    );
    expect(fromRecord).toEqual({
      custom_hash: record.custom_hash,
      content_hash: record.content_hash,
      state_hash: record.state_hash,
      integrity_hash: record.integrity_hash,
    });

    // Past states are not stored: they are replayed from the action log's params.
    const states = replay(log, template);
    expect(states.at(-1)).toEqual({
      owner: record.owner,
      location: record.location,
      custom: record.custom,
      metadata: record.metadata,
      is_redeemed: record.is_redeemed,
      is_dropped: record.is_dropped,
    });
    const stored = await svc.container.db.execute<{
      id: string;
      integrity_hash: string;
      prev_integrity_hash: string;
    }>(
      sql`SELECT id, integrity_hash, prev_integrity_hash FROM action_logs WHERE object_id = ${record.id as string}`,
    );
    const links = new Map(
      stored.rows.map((r) => [
        r.id,
        { integrity_hash: r.integrity_hash, prev_integrity_hash: r.prev_integrity_hash },
      ]),
    );
    const integrity: string[] = [];
    states.forEach((s, i) => {
      const prev = i === 0 ? GENESIS : integrity[i - 1]!;
      integrity.push(hashesOf(s, template.faces, prev, log[i]!.hash).integrity_hash);
    });

    // Walk back from the newest state: each link is the previous state's integrity hash,
    // and the mint's is the genesis hash.
    let cursor = record.integrity_hash as string;
    let prev = record.prev_integrity_hash as string;
    for (let i = states.length - 1; i >= 0; i--) {
      expect(integrity[i]).toBe(cursor);
      const expectedPrev = i === 0 ? GENESIS : integrity[i - 1]!;
      expect(hashesOf(states[i]!, template.faces, expectedPrev, log[i]!.hash).integrity_hash).toBe(
        cursor,
      );
      if (i === states.length - 1) expect(prev).toBe(expectedPrev);
      expect(links.get(log[i]!.id)).toEqual({
        integrity_hash: cursor,
        prev_integrity_hash: expectedPrev,
      });
      cursor = expectedPrev;
      prev = expectedPrev;
    }
    expect(cursor).toBe(GENESIS);

    // The same walk from stored data alone: newest state → the action that made it (the
    // action_logs row keeps its link) → previous state → … → mint.
    const byIntegrity = new Map(
      log.map((l) => [links.get(l.id)!.integrity_hash, { ...l, ...links.get(l.id)! }]),
    );
    const walked: string[] = [];
    for (let link = record.integrity_hash as string; link !== GENESIS;) {
      const entry = byIntegrity.get(link);
      expect(entry, `no action produced ${link}`).toBeDefined();
      walked.push(entry!.name);
      link = entry!.prev_integrity_hash;
    }
    expect(walked.reverse()).toEqual(log.map((l) => l.name));
    expect(walked[0]).toBe('mint');
  });

  it('changes its integrity hash when any link of the replay is altered', async () => {
    const alice = await createSigner(svc, { role: 'owner' });
    await fund(svc, alice.orgId, FEE * 10n);
    const templateId = await createTemplate(svc, alice.orgId);
    const minted = await act(alice, 'mint', { template_id: templateId, custom: { n: 1 } });
    const id = minted.object.id as string;
    const updated = await act(alice, 'update', { object_id: id, custom: { n: 2 } });
    const tpl = (
      await svc.app.inject({
        method: 'GET',
        url: `/templates/${templateId}`,
        headers: alice.headers,
      })
    ).json();
    const log = (
      await svc.app.inject({
        method: 'GET',
        url: `/ebus/action-logs?object_id=${id}&order=asc`,
        headers: alice.headers,
      })
    ).json().action_logs as LogEntry[];
    const states = replay(log, tpl);
    const mintHash = hashesOf(states[0]!, tpl.faces, GENESIS, log[0]!.hash).integrity_hash;
    expect(updated.object.prev_integrity_hash).toBe(mintHash);
    expect(hashesOf(states[1]!, tpl.faces, mintHash, log[1]!.hash).integrity_hash).toBe(
      updated.object.integrity_hash,
    );
    // A different past (custom n: 3 at mint) or action hash does not reach the same head.
    const forged = hashesOf({ ...states[0]!, custom: { n: 3 } }, tpl.faces, GENESIS, log[0]!.hash);
    expect(
      hashesOf(states[1]!, tpl.faces, forged.integrity_hash, log[1]!.hash).integrity_hash,
    ).not.toBe(updated.object.integrity_hash);
    expect(hashesOf(states[1]!, tpl.faces, mintHash, log[0]!.hash).integrity_hash).not.toBe(
      updated.object.integrity_hash,
    );
  });
});
