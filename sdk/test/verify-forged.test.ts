import type { webcrypto } from 'node:crypto';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/actions/canonical-json.js';
import { actionTextOf } from '../src/verify/actions.js';
import {
  commitmentOf,
  GENESIS,
  headerHash,
  integrityRootOf,
  ipfsUrlOf,
  privateCommitmentOf,
  verifyPrivateAction,
} from '../src/verify/batches.js';
import { hashBytes, hex, sha256, utf8 } from '../src/verify/bytes.js';
import { leafHashOf, merkleRoot, merkleRootOfData } from '../src/verify/merkle.js';
import { objectHashes } from '../src/verify/objects.js';
import { verifyNetwork } from '../src/verify/run.js';
import { verifySealedBatch } from '../src/verify/sealed-batch.js';
import type { Source } from '../src/verify/source.js';
import type { ActionRecord, BatchRecord, PrivateActionRecord } from '../src/verify/types.js';

/**
 * A dishonest service that recomputes every hash and signs with its real batch key (the
 * review's fake network): each test builds an honest network of one public object, then
 * changes one thing only the check under test catches.
 */

const NET = 'ons-test';
const ORG = 'org_1';
const victim = privateKeyToAccount(`0x${'11'.repeat(32)}`);
const T = { id: 'tpl_1', name: 'Ticket', description: 'd', category: 'c', faces: [] as unknown[] };
const EXP = '2030-01-01T00:00:00.000Z';
const P = 'obj_P';
const ZERO_SIG = `0x${'00'.repeat(65)}`;

type Rec = Record<string, unknown> & { id: string; hash: string; batch_id: string | null };

async function act(
  id: string,
  nonce: number,
  name: string,
  params: Record<string, unknown>,
  batchId: string | null,
  when = '2025-01-01T00:00:00.000Z',
): Promise<Rec> {
  const r: Rec = {
    id,
    hash: '',
    name,
    wallet: victim.address.toLowerCase(),
    organization_id: ORG,
    signature_type: 'eoa',
    nonce,
    params,
    expires: EXP,
    object_id: P,
    template_id: T.id,
    template_version: null,
    fee_wei: '10',
    batch_id: batchId,
    log_index: null,
    when_created: when,
  };
  const text = actionTextOf(r as unknown as ActionRecord, NET);
  r.hash = hex(sha256(utf8(text)));
  r.signature = await victim.signMessage({ message: text });
  return r;
}

/** Each action's integrity hash, and the object as the service shows it. */
function replay(history: Rec[]) {
  let prev = GENESIS;
  let prevOfLast = GENESIS;
  let state: Record<string, unknown> = {};
  let last: ReturnType<typeof objectHashes> | undefined;
  const integrity = new Map<string, string>();
  for (const a of history) {
    const p = a.params as { custom?: Record<string, unknown> };
    if (a.name === 'mint') {
      state = {
        owner: a.wallet,
        location: null,
        custom: p.custom ?? {},
        metadata: {
          name: T.name,
          description: T.description,
          category: T.category,
          image: null,
          edition: 1,
        },
        is_redeemed: false,
        is_dropped: false,
      };
    } else if (p.custom) state = { ...state, custom: p.custom };
    last = objectHashes(state as never, T.faces, prev, a.hash);
    integrity.set(a.id, last.integrity_hash);
    prevOfLast = prev;
    prev = last.integrity_hash;
  }
  const object = { id: P, ...state, template_id: T.id, ...last, prev_integrity_hash: prevOfLast };
  return { object, integrity };
}

/** RFC 6962 PATH(m, D). */
function auditPath(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length <= 1) return [];
  let k = 1;
  while (k * 2 < d.length) k *= 2;
  return m < k
    ? [...auditPath(m, d.slice(0, k)), merkleRootOfData(d.slice(k))]
    : [...auditPath(m - k, d.slice(k)), merkleRootOfData(d.slice(0, k))];
}

interface Sealing {
  id: string;
  version: number;
  /** The content's actions (their `integrity_hash` added here). */
  actions: Rec[];
  /** Rewrites the canonical content text before it is hashed. */
  raw?: (text: string) => string;
  /** The header's `total_fee_wei` (default: the BigInt sum of the actions' `fee_wei`). */
  totalFeeWei?: string;
}

/** The service: batches sealed from `sealings` in order, and the history of object P. */
async function network(history: Rec[], sealings: Sealing[]) {
  const { object, integrity } = replay(history);
  const kp = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const pub = hex(new Uint8Array(await crypto.subtle.exportKey('raw', kp.publicKey)));
  const batches: Record<string, unknown>[] = [];
  const contents = new Map<string, Uint8Array>();
  const proofs = new Map<string, unknown>();
  for (const s of sealings) {
    const prev = batches.at(-1) as { hash: string; integrity_root: string } | undefined;
    const actions = s.actions.map((a): Rec => {
      // A private record (content version 4): only what docs/batches.md lets it show.
      if (a.private === true) {
        const { batch_id, commitment, fee_wei, id, object_id } = a;
        return { batch_id, commitment, fee_wei, id, object_id, private: true } as unknown as Rec;
      }
      const { log_index: _, ...r } = a;
      return { ...r, integrity_hash: integrity.get(a.id) ?? GENESIS };
    });
    /** The `actions_hash` leaf data and `integrity_root` leaf value of an action. */
    const leafOf = (a: Rec) => (a.private === true ? a.commitment : a.hash) as string;
    const valueOf = (a: Rec) => (a.private === true ? a.commitment : a.integrity_hash) as string;
    const leaves = actions.map((a) => hashBytes(leafOf(a))!);
    const lastOf = actions.at(-1)!;
    const fee =
      s.totalFeeWei ?? String(actions.reduce((n, a) => n + BigInt(a.fee_wei as string), 0n));
    const h: Record<string, unknown> = {
      id: s.id,
      sequence: batches.length + 1,
      prev_hash: prev?.hash ?? GENESIS,
      prev_integrity_root: prev?.integrity_root ?? GENESIS,
      integrity_root: integrityRootOf([{ id: P, integrity_hash: valueOf(lastOf) }]),
      actions_hash: merkleRoot(leaves),
      actions_count: actions.length,
      total_fee_wei: fee,
      when_created: '2025-01-02T00:00:00.000Z',
    };
    h.commitment = commitmentOf(h as never);
    h.hash = headerHash(h as never);
    const sig = new Uint8Array(
      await crypto.subtle.sign({ name: 'Ed25519' }, kp.privateKey, hashBytes(h.commitment)!),
    );
    const body: Record<string, unknown> = { actions, batch: h };
    if (s.version >= 2) {
      body.objects = [
        lastOf.private === true
          ? { commitment: lastOf.commitment, id: P }
          : { id: P, integrity_hash: lastOf.integrity_hash },
      ];
      body.version = s.version;
    }
    let text = canonicalJson(body);
    if (s.raw) text = s.raw(text);
    const bytes = utf8(text);
    contents.set(s.id, bytes);
    batches.push({
      ...h,
      version: s.version,
      ipfs_url: ipfsUrlOf(bytes),
      status: 'proven',
      affected_actions: actions.map((a) => ({
        id: a.id,
        hash: leafOf(a),
        name: a.private === true ? '' : a.name,
        alias: P,
        private: a.private === true,
      })),
      proof: {
        type: 'ed25519-attestation',
        value: hex(sig),
        public_values: h.commitment,
        vkey: pub,
        message: '',
      },
      proof_id: hex(sha256(utf8('ed25519-attestation'), Uint8Array.of(0), sig)),
    });
    actions.forEach((a, i) =>
      proofs.set(`${s.id}/${a.id}`, {
        leaf_index: i,
        tree_size: leaves.length,
        audit_path: auditPath(i, leaves).map(hex),
        leaf_hash: hex(leafHashOf(leaves[i]!)),
        root: merkleRoot(leaves),
      }),
    );
  }
  const routes: Record<string, unknown> = {
    '/public/network': { network: NET, batch_public_key: pub },
    '/batches?order=asc&limit=100': { batches, next: null, has_more: false },
    '/public/objects?order=asc&limit=100&include_dropped=true': {
      objects: [object],
      next: null,
      has_more: false,
    },
    [`/public/objects?id=${P}&include_dropped=true`]: { objects: [object] },
    [`/public/objects/${P}/history?order=asc&limit=100`]: {
      action_logs: history,
      next: null,
      has_more: false,
    },
    [`/public/templates/${T.id}`]: T,
  };
  for (const b of batches) routes[`/batches/${String(b.id)}`] = b;
  const source: Source = {
    json<J>(path: string) {
      const m = /^\/batches\/([^/]+)\/proofs\/([^/]+)$/.exec(path);
      const found = m ? proofs.get(`${m[1]}/${m[2]}`) : routes[path];
      return Promise.resolve((found === undefined ? null : structuredClone(found)) as J | null);
    },
    bytes(path: string) {
      const m = /^\/batches\/([^/]+)\/content$/.exec(path);
      return Promise.resolve((m && contents.get(m[1]!)) ?? null);
    },
  };
  return { source, batches: batches as unknown as BatchRecord[] };
}

const failures = (verdicts: { ok: boolean; item: string; failed?: string }[]) =>
  verdicts.filter((v) => !v.ok).map((v) => `${v.item}: ${v.failed}`);

/** mint (bat_1), update (bat_2): what every test starts from. */
async function honest() {
  const a1 = await act('act_1', 0, 'mint', { template_id: T.id }, 'bat_1');
  const a2 = await act('act_2', 1, 'update', { object_id: P, custom: { seat: '1' } }, 'bat_2');
  return { a1, a2 };
}

describe('verifyNetwork against a service that recomputes every hash', () => {
  it('passes the honest network', async () => {
    const { a1, a2 } = await honest();
    const { source } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 2, actions: [a1] },
        { id: 'bat_2', version: 2, actions: [a2] },
      ],
    );
    const report = await verifyNetwork(source);
    expect(failures(report.verdicts)).toEqual([]);
  });
});

describe('H3: a batch copy of an action is the copy whose signature was checked', () => {
  it('checks a copy reusing a checked id (other params, made-up hash, zero signature)', async () => {
    const { a1, a2 } = await honest();
    const forged: Rec = {
      ...a1,
      batch_id: 'bat_2',
      params: { template_id: T.id, owner: '0x'.padEnd(42, '2') },
      hash: hex(sha256(utf8('made up'))),
      signature: ZERO_SIG,
    };
    const { source, batches } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 2, actions: [a1] },
        { id: 'bat_2', version: 2, actions: [a2, forged] },
      ],
    );
    // The copy is also an action on P that P's history does not put in bat_2 (`history`).
    const report = await verifyNetwork(source);
    expect(failures(report.verdicts)).toEqual([
      'batch 2 bat_2: history',
      'action act_1: batch_id',
      'action act_1: hash',
    ]);
    const sealed = await verifySealedBatch(source, batches[1]!, { previous: batches[0]! });
    expect(sealed.ok).toBe(false);
    expect(failures(sealed.lines.map((l) => l.verdict))).toEqual([
      'action act_1: hash',
      'batch 2 bat_2: history',
    ]);
  });
});

describe('M1: every history action gets an inclusion verdict', () => {
  it('fails an action naming a batch that is not served, and reports an old unbatched one', async () => {
    const a1 = await act('act_1', 0, 'mint', { template_id: T.id }, 'bat_1');
    const a2 = await act('act_2', 1, 'update', { object_id: P, custom: { s: 1 } }, 'bat_nowhere');
    const a3 = await act('act_3', 2, 'update', { object_id: P, custom: { s: 2 } }, null);
    const { source } = await network([a1, a2, a3], [{ id: 'bat_1', version: 2, actions: [a1] }]);
    const report = await verifyNetwork(source);
    expect(failures(report.verdicts)).toEqual(['proof act_2 in bat_nowhere: batch_id']);
    // act_3 is older than the last sealed batch and in none: not failed, but not silent.
    expect(report.verdicts).toContainEqual({
      item: 'proof act_3 in no batch',
      ok: true,
      skipped: ['proof'],
    });
  });
});

describe('M2: a batch is not served as an older content version', () => {
  it('fails a version 1 batch after a version 4 one, two batches on (and passes 4, 3, 4)', async () => {
    const a1 = await act('act_1', 0, 'mint', { template_id: T.id }, 'bat_1');
    const a2 = await act('act_2', 1, 'update', { object_id: P, custom: { s: 1 } }, 'bat_2');
    const a3 = await act('act_3', 2, 'update', { object_id: P, custom: { s: 2 } }, 'bat_3');
    // Its copy in version 1 content: that copy's signature is not read.
    const forged: Rec = { ...a3, signature: ZERO_SIG };
    const sealings = (v3: number, last: Rec): Sealing[] => [
      { id: 'bat_1', version: 4, actions: [a1] },
      { id: 'bat_2', version: 3, actions: [a2] },
      { id: 'bat_3', version: v3, actions: [last] },
    ];
    const fake = await network([a1, a2, a3], sealings(1, forged));
    expect(failures((await verifyNetwork(fake.source)).verdicts)).toEqual([
      'batch 3 bat_3: version',
    ]);
    const real = await network([a1, a2, a3], sealings(4, a3));
    expect(failures((await verifyNetwork(real.source)).verdicts)).toEqual([]);
  });
});

describe('M3: content bytes are RFC 8785', () => {
  it('fails a duplicate key with whitespace (same CID for every reader, two readings)', async () => {
    const { a1, a2 } = await honest();
    const { source } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 2, actions: [a1] },
        {
          id: 'bat_2',
          version: 2,
          actions: [a2],
          raw: (t) => t.replace('{"actions":', '{"actions":[], "actions":'),
        },
      ],
    );
    expect(failures((await verifyNetwork(source)).verdicts)).toEqual(['batch 2 bat_2: content']);
  });
});

describe("a public object's actions in a batch are exactly its history's there", () => {
  /** A private record on the public object P, its commitment made up (nobody can open it). */
  const privateRecord = (base: Record<string, unknown>): Rec =>
    ({ ...base, private: true, commitment: hex(sha256(utf8('made up'))) }) as unknown as Rec;

  it('passes the honest version 4 network', async () => {
    const { a1, a2 } = await honest();
    const { source, batches } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 4, actions: [a1] },
        { id: 'bat_2', version: 4, actions: [a2] },
      ],
    );
    expect(failures((await verifyNetwork(source)).verdicts)).toEqual([]);
    const sealed = await verifySealedBatch(source, batches[1]!, { previous: batches[0]! });
    expect(failures(sealed.lines.map((l) => l.verdict))).toEqual([]);
  });

  it("fails an invented private action on a public object, whose commitment is then the object's integrity_root leaf", async () => {
    const { a1, a2 } = await honest();
    const invented = privateRecord({ id: 'act_x', batch_id: 'bat_2', fee_wei: '10', object_id: P });
    const { source, batches } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 4, actions: [a1] },
        { id: 'bat_2', version: 4, actions: [a2, invented] },
      ],
    );
    const report = await verifyNetwork(source);
    expect(failures(report.verdicts)).toEqual(['batch 2 bat_2: history']);
    expect(report.verdicts.find((v) => !v.ok)?.reason).toContain('act_x');
    const sealed = await verifySealedBatch(source, batches[1]!, { previous: batches[0]! });
    expect(failures(sealed.lines.map((l) => l.verdict))).toEqual(['batch 2 bat_2: history']);
  });

  it('fails a public history action sealed as private, and one left out of the content', async () => {
    const { a1, a2 } = await honest();
    const hidden = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 4, actions: [a1] },
        { id: 'bat_2', version: 4, actions: [privateRecord(a2)] },
      ],
    );
    // Its proof starts from the commitment, not from the history's hash, too.
    expect(failures((await verifyNetwork(hidden.source)).verdicts)).toEqual([
      'proof act_2 in bat_2: leaf_hash',
      'batch 2 bat_2: history',
    ]);
    // bat_2 holds only a stranger's action on P: act_2 of P's history is not in it.
    const other = privateRecord({ id: 'act_y', batch_id: 'bat_2', fee_wei: '10', object_id: P });
    const missing = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 4, actions: [a1] },
        { id: 'bat_2', version: 4, actions: [other] },
      ],
    );
    expect(failures((await verifyNetwork(missing.source)).verdicts)).toEqual([
      'proof act_2 in bat_2: proof',
      'batch 2 bat_2: history',
    ]);
  });
});

describe('verifyPrivateAction rebuilds what the opening carries', () => {
  /** A member's opening of its action sealed private in a one-action version 4 batch. */
  async function opening() {
    const a = await act('act_2', 1, 'update', { object_id: P, custom: { ssn: '1' } }, 'bat_2');
    const salt = hex(sha256(utf8('salt')));
    const integrity = hex(sha256(utf8('integrity')));
    const commitment = privateCommitmentOf(salt, a.hash, integrity)!;
    const leaves = [hashBytes(commitment)!];
    const batch = { id: 'bat_2', version: 4, actions_hash: merkleRoot(leaves), actions_count: 1 };
    const proof = {
      leaf_index: 0,
      tree_size: 1,
      audit_path: [],
      leaf_hash: hex(leafHashOf(leaves[0]!)),
      root: batch.actions_hash,
    };
    const record = {
      action: a,
      integrity_hash: integrity,
      private: true,
      version: 4,
      salt,
      commitment,
      leaf: commitment,
    } as unknown as PrivateActionRecord;
    const context = { network: NET, credential: () => Promise.resolve(null) };
    return { record, batch, proof, context };
  }
  const item = 'private action act_2 in bat_2';

  it('passes the genuine opening, and names what it could not check', async () => {
    const { record, batch, proof, context } = await opening();
    expect(await verifyPrivateAction(record, batch, { context, proof })).toEqual({
      item,
      ok: true,
      skipped: ['integrity_hash'],
    });
    expect(await verifyPrivateAction(record, batch)).toEqual({
      item,
      ok: true,
      skipped: ['hash', 'signature', 'proof', 'integrity_hash'],
    });
  });

  it("fails a record whose params are not its hash's text, or whose signature is not the wallet's", async () => {
    const { record, batch, proof, context } = await opening();
    // Other params under the genuine hash: the commitment still opens to that hash.
    const params = { object_id: P, custom: { ssn: '2' } };
    const changed = { ...record, action: { ...record.action, params } };
    expect(await verifyPrivateAction(changed, batch, { context, proof })).toMatchObject({
      ok: false,
      failed: 'hash',
    });
    const unsigned = { ...record, action: { ...record.action, signature: ZERO_SIG } };
    expect(await verifyPrivateAction(unsigned, batch, { context, proof })).toMatchObject({
      ok: false,
      failed: 'signature',
    });
  });

  it('fails an opening of another batch, and a leaf the proof does not start from', async () => {
    const { record, batch, proof, context } = await opening();
    const other = { ...record, action: { ...record.action, batch_id: 'bat_3' } };
    expect(await verifyPrivateAction(other, batch, { context, proof })).toMatchObject({
      failed: 'batch_id',
    });
    const leaf = hex(sha256(utf8('another leaf')));
    const elsewhere = { ...proof, leaf_hash: hex(leafHashOf(hashBytes(leaf)!)) };
    expect(await verifyPrivateAction(record, batch, { context, proof: elsewhere })).toMatchObject({
      failed: 'leaf_hash',
    });
  });
});

describe("an inclusion proof's tree_size is the batch's actions_count", () => {
  it('fails the last of three leaves proven as the second of two (same root, same path)', async () => {
    const a1 = await act('act_1', 0, 'mint', { template_id: T.id }, 'bat_1');
    const a2 = await act('act_2', 1, 'update', { object_id: P, custom: { s: 1 } }, 'bat_2');
    const a3 = await act('act_3', 2, 'update', { object_id: P, custom: { s: 2 } }, 'bat_2');
    const a4 = await act('act_4', 3, 'update', { object_id: P, custom: { s: 3 } }, 'bat_2');
    const { source: honestSource, batches } = await network(
      [a1, a2, a3, a4],
      [
        { id: 'bat_1', version: 4, actions: [a1] },
        { id: 'bat_2', version: 4, actions: [a2, a3, a4] },
      ],
    );
    const path = `/batches/bat_2/proofs/act_4`;
    const real = (await honestSource.json<{ leaf_index: number; tree_size: number }>(path))!;
    expect(real).toMatchObject({ leaf_index: 2, tree_size: 3 });
    // RFC 9162 accepts it too: H(1 ‖ H(1 ‖ l2 ‖ l3) ‖ l4) is the root of both trees.
    const forged = { ...real, leaf_index: 1, tree_size: 2 };
    const source: Source = {
      ...honestSource,
      json: <J>(p: string) => (p === path ? Promise.resolve(forged as J) : honestSource.json<J>(p)),
    };
    expect(failures((await verifyNetwork(honestSource)).verdicts)).toEqual([]);
    expect(failures((await verifyNetwork(source)).verdicts)).toEqual([
      'proof act_4 in bat_2: tree_size',
    ]);
    const sealed = await verifySealedBatch(source, batches[1]!, { previous: batches[0]! });
    expect(failures(sealed.lines.map((l) => l.verdict))).toEqual([
      'proof act_4 in bat_2: tree_size',
    ]);
  });
});

describe('fee_wei is a canonical decimal integer', () => {
  it.each(['010', '+10', ' 10', '0x0a', '1e1', '-0', '', 10])(
    'fails a content fee_wei of %j (the header summing it as BigInt reads it)',
    async (written) => {
      const { a1, a2 } = await honest();
      // fee_wei is not signed: the history's records keep theirs, the content shows this one.
      const fee = { ...a2, fee_wei: written } as unknown as Rec;
      // The service sums what it wrote: a BigInt where BigInt reads it, else 10.
      let sum: string;
      try {
        sum = String(BigInt(written));
      } catch {
        sum = '10';
      }
      const { source } = await network(
        [a1, a2],
        [
          { id: 'bat_1', version: 2, actions: [a1] },
          { id: 'bat_2', version: 2, actions: [fee], totalFeeWei: sum },
        ],
      );
      const report = await verifyNetwork(source);
      expect(failures(report.verdicts)).toEqual(['batch 2 bat_2: fee_wei']);
      expect(report.verdicts.find((v) => !v.ok)?.reason).toContain('act_2');
    },
  );

  it('passes "0" and a fee of more digits than a Number holds', async () => {
    const { a1, a2 } = await honest();
    const big = '123456789012345678901234567890';
    const { source } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 2, actions: [{ ...a1, fee_wei: '0' }] },
        { id: 'bat_2', version: 2, actions: [{ ...a2, fee_wei: big }] },
      ],
    );
    expect(failures((await verifyNetwork(source)).verdicts)).toEqual([]);
  });
});

describe('maxObjects does not cut the public list silently', () => {
  const LIST = '/public/objects?order=asc&limit=100&include_dropped=true';
  const cut = (max: number) => ({
    item: `public objects after the first ${max}`,
    ok: true,
    skipped: ['maxObjects'],
  });

  it('reports the objects past maxObjects as not checked, and nothing when none are', async () => {
    const { a1, a2 } = await honest();
    const { source } = await network(
      [a1, a2],
      [
        { id: 'bat_1', version: 2, actions: [a1] },
        { id: 'bat_2', version: 2, actions: [a2] },
      ],
    );
    const none = await verifyNetwork(source, { maxObjects: 0 });
    expect(none.ok).toBe(true);
    expect(none.verdicts[0]).toEqual(cut(0));
    const all = await verifyNetwork(source, { maxObjects: 1 });
    expect(all.verdicts).not.toContainEqual(expect.objectContaining({ skipped: ['maxObjects'] }));
    // A first page that fills maxObjects and says there is more: no further page is read.
    const read: string[] = [];
    const paged: Source = {
      ...source,
      async json<J>(path: string) {
        read.push(path);
        const answer = await source.json<Record<string, unknown>>(path);
        return (path === LIST ? { ...answer, next: 'c2', has_more: true } : answer) as J;
      },
    };
    const first = await verifyNetwork(paged, { maxObjects: 1 });
    expect(first.verdicts[0]).toEqual(cut(1));
    expect(failures(first.verdicts)).toEqual([]);
    expect(read.filter((p) => p.startsWith(`${LIST}&next=`))).toEqual([]);
  });
});
