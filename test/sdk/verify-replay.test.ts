import { createHash } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  actionTextOf,
  GENESIS,
  geohash,
  objectHashes,
  verifyNetwork,
  type ActionRecord,
  type Source,
  type Verdict,
} from '@ons/sdk';

/**
 * The replay applies only what the service would have applied (src/modules/objects/actions,
 * docs/ebus.md "Refusals"). Each history here is served by a dishonest service that
 * recomputes every hash and signs nothing but with the wallets' real keys, so the chain, the
 * hashes and the signatures all hold: only the rule named catches it.
 */

const NET = 'ons-test';
const ORG = 'org_1';
const victim = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const attacker = privateKeyToAccount(`0x${'22'.repeat(32)}`);
const T = { id: 'tpl_1', name: 'Ticket', description: 'd', category: 'c', faces: [] as unknown[] };
const EXP = '2030-01-01T00:00:00.000Z';
const sha = (s: string) => `0x${createHash('sha256').update(s).digest('hex')}`;

type Signer = typeof victim;
type Rec = Record<string, unknown> & { id: string; hash: string };
interface Opts {
  expires?: string;
  when?: string;
  objectId?: string;
}

/** One signed action record on `obj` (its text, hash and signature all genuine). */
async function act(
  id: string,
  signer: Signer,
  nonce: number,
  name: string,
  params: Record<string, unknown>,
  obj: string,
  opts: Opts = {},
): Promise<Rec> {
  const r: Record<string, unknown> = {
    id,
    name,
    wallet: signer.address.toLowerCase(),
    organization_id: ORG,
    signature_type: 'eoa',
    nonce,
    params,
    expires: opts.expires ?? EXP,
    object_id: opts.objectId ?? obj,
    template_id: T.id,
    template_version: null,
    fee_wei: '10',
    batch_id: null,
    log_index: null,
    when_created: opts.when ?? '2025-01-01T00:00:00.000Z',
  };
  const text = actionTextOf(r as unknown as ActionRecord, NET);
  r.hash = sha(text);
  r.signature = await signer.signMessage({ message: text });
  return r as Rec;
}

type Place = { latitude: number; longitude: number; geo_hash: string } | null;
interface State {
  owner: string;
  location: Place;
  custom: Record<string, unknown>;
  metadata: Record<string, unknown>;
  is_redeemed: boolean;
  is_dropped: boolean;
}

/** What the dishonest service serves: the object its history leaves, applying every action. */
function serve(id: string, history: Rec[]) {
  let state = null as unknown as State;
  let prev = GENESIS;
  let prevOfLast = GENESIS;
  let last = null as unknown as ReturnType<typeof objectHashes>;
  for (const a of history) {
    const p = a.params as {
      owner?: string;
      to: string;
      custom?: Record<string, unknown>;
      location: { latitude: number; longitude: number };
    };
    const wallet = (a.wallet as string).toLowerCase();
    const at = (l: { latitude: number; longitude: number }) => ({
      ...l,
      geo_hash: geohash(l.latitude, l.longitude),
    });
    if (a.name === 'mint') {
      state = {
        owner: (p.owner ?? wallet).toLowerCase(),
        location: null,
        custom: p.custom ?? {},
        metadata: { name: T.name, description: T.description, category: T.category },
        is_redeemed: false,
        is_dropped: false,
      };
      state.metadata = { ...state.metadata, image: null, edition: 1 };
    } else if (a.name === 'transfer') state = { ...state, owner: p.to.toLowerCase() };
    else if (a.name === 'update') state = { ...state, custom: p.custom ?? state.custom };
    else if (a.name === 'redeem') state = { ...state, is_redeemed: true };
    else if (a.name === 'drop') state = { ...state, is_dropped: true, location: at(p.location) };
    else if (a.name === 'pickup') state = { ...state, is_dropped: false, owner: wallet };
    last = objectHashes(state, T.faces, prev, a.hash);
    prevOfLast = prev;
    prev = last.integrity_hash;
  }
  return { id, template_id: T.id, ...state, ...last, prev_integrity_hash: prevOfLast };
}

/** A network of the given objects' histories and no sealed batch yet. */
function network(histories: Record<string, Rec[]>): Source {
  const routes: Record<string, unknown> = {
    '/public/network': { network: NET, batch_public_key: '0x' },
    '/batches?order=asc&limit=100': { batches: [], next: null, has_more: false },
    '/public/objects?order=asc&limit=100&include_dropped=true': {
      objects: Object.entries(histories).map(([id, h]) => serve(id, h)),
      next: null,
      has_more: false,
    },
    [`/public/templates/${T.id}`]: T,
  };
  for (const [id, h] of Object.entries(histories)) {
    routes[`/public/objects/${id}/history?order=asc&limit=100`] = {
      action_logs: h,
      next: null,
      has_more: false,
    };
  }
  return {
    json: <T>(path: string) =>
      Promise.resolve((path in routes ? structuredClone(routes[path]) : null) as T | null),
    bytes: () => Promise.resolve(null),
  };
}

const failures = async (histories: Record<string, Rec[]>): Promise<Verdict[]> =>
  (await verifyNetwork(network(histories))).verdicts.filter((v) => !v.ok);

const Q = 'obj_Q';
const mintQ = (nonce = 0) =>
  act('act_mint', victim, nonce, 'mint', { template_id: T.id, custom: { seat: '1' } }, Q);

describe('the replay applies only what the service would', () => {
  it('an honest history verifies', async () => {
    const h = [
      await mintQ(),
      await act('act_u', victim, 1, 'update', { object_id: Q, custom: { seat: '2' } }, Q),
      await act(
        'act_d',
        victim,
        2,
        'drop',
        { object_id: Q, location: { latitude: 1, longitude: 2 } },
        Q,
      ),
      await act('act_p', attacker, 0, 'pickup', { object_id: Q }, Q),
      await act('act_r', attacker, 1, 'redeem', { object_id: Q }, Q),
    ];
    expect(await failures({ [Q]: h })).toEqual([]);
  });

  it('an action signed for another object is not applied to this one', async () => {
    const update = await act(
      'act_u',
      victim,
      1,
      'update',
      { object_id: 'obj_OTHER', custom: {} },
      Q,
    );
    expect(await failures({ [Q]: [await mintQ(), update] })).toMatchObject([
      { item: `object ${Q}`, failed: 'object_id' },
    ]);
  });

  it('a mint signed for another template is not this object’s mint', async () => {
    const mint = await act('act_mint', victim, 0, 'mint', { template_id: 'tpl_other' }, Q);
    expect(await failures({ [Q]: [mint] })).toMatchObject([
      { item: `object ${Q}`, failed: 'template_id' },
    ]);
  });

  it('only the owner transfers, updates, drops or redeems', async () => {
    for (const [name, params] of [
      ['transfer', { object_id: Q, to: attacker.address }],
      ['update', { object_id: Q, custom: { stolen: true } }],
      ['drop', { object_id: Q, location: { latitude: 1, longitude: 2 } }],
      ['redeem', { object_id: Q }],
    ] as const) {
      const theft = await act('act_x', attacker, 0, name, params, Q);
      expect(await failures({ [Q]: [await mintQ(), theft] })).toMatchObject([
        { item: `object ${Q}`, failed: 'owner_only' },
      ]);
    }
  });

  it('a redeemed object accepts nothing more', async () => {
    const h = [
      await mintQ(),
      await act('act_r', victim, 1, 'redeem', { object_id: Q }, Q),
      await act('act_u', victim, 2, 'update', { object_id: Q, custom: { seat: '2' } }, Q),
    ];
    expect(await failures({ [Q]: h })).toMatchObject([{ item: `object ${Q}`, failed: 'redeemed' }]);
  });

  it('a dropped object accepts only pickup', async () => {
    const h = [
      await mintQ(),
      await act(
        'act_d',
        victim,
        1,
        'drop',
        { object_id: Q, location: { latitude: 1, longitude: 2 } },
        Q,
      ),
      await act('act_u', victim, 2, 'update', { object_id: Q, custom: { seat: '2' } }, Q),
    ];
    expect(await failures({ [Q]: h })).toMatchObject([{ item: `object ${Q}`, failed: 'dropped' }]);
  });

  it('pickup takes only a dropped object', async () => {
    const h = [await mintQ(), await act('act_p', attacker, 0, 'pickup', { object_id: Q }, Q)];
    expect(await failures({ [Q]: h })).toMatchObject([{ item: `object ${Q}`, failed: 'dropped' }]);
  });

  it('a second mint does not reset the object', async () => {
    const h = [await mintQ(), await act('act_m2', attacker, 0, 'mint', { template_id: T.id }, Q)];
    expect(await failures({ [Q]: h })).toMatchObject([{ item: `object ${Q}`, failed: 'mint' }]);
  });

  it('an action is not applied after it expired', async () => {
    const late = await act('act_u', victim, 1, 'update', { object_id: Q, custom: {} }, Q, {
      expires: '2025-01-01T00:10:00.000Z',
      when: '2025-06-01T00:00:00.000Z',
    });
    expect(await failures({ [Q]: [await mintQ(), late] })).toMatchObject([
      { item: `object ${Q}`, failed: 'expired' },
    ]);
  });

  it('one signed action is applied once, under any id', async () => {
    const u = await act('act_u1', victim, 1, 'update', { object_id: Q, custom: { seat: '2' } }, Q);
    const h = [await mintQ(), u, { ...u, id: 'act_u2' }];
    expect(await failures({ [Q]: h })).toMatchObject([
      { item: 'action act_u2', failed: 'replayed' },
    ]);
  });

  it('a wallet’s nonce is used once across the run', async () => {
    const P = 'obj_P';
    const mintP = await act('act_mintP', victim, 1, 'mint', { template_id: T.id }, P);
    const h = [
      await mintQ(),
      await act('act_u', victim, 1, 'update', { object_id: Q, custom: {} }, Q),
    ];
    expect(await failures({ [P]: [mintP], [Q]: h })).toMatchObject([
      { item: 'action act_u', failed: 'nonce' },
    ]);
  });
});
