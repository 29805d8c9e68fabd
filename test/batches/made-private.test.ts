import { createHash } from 'node:crypto';
import { verifyBatch, verifySealedBatch, type BatchRecord, type Source } from '@ons/sdk';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { ipfsUrl } from '../../src/modules/batches/formulas.js';
import { BatchExplorer } from '../../src/modules/batches/service.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';

/**
 * What an anonymous caller sees of a sealed batch's action depends on its object's visibility
 * now as well as at the seal (docs/batches.md, "What is public"): one batch holds actions on
 * four objects, each of its own template, one per row of the table below (public or private
 * when the batch sealed × public or private now; the templates are switched after the seal).
 * Every anonymous route of the explorer is asked about each, and none may show anything but
 * the id, object and leaf of an action whose object is private at either time.
 */
type Visibility = 'public' | 'private';
interface Case {
  key: string;
  atSeal: Visibility;
  now: Visibility;
}
const CASES: Case[] = [
  { key: 'kept public', atSeal: 'public', now: 'public' },
  { key: 'made private', atSeal: 'public', now: 'private' },
  { key: 'kept private', atSeal: 'private', now: 'private' },
  { key: 'made public', atSeal: 'private', now: 'public' },
];
const shownPrivate = (c: Case) => c.atSeal === 'private' || c.now === 'private';
const secretOf = (c: Case) => `SECRET-${c.key.replace(' ', '-')}-123-45-6789`;

const svc = useTestService({
  env: { BATCH_MAX_ACTIONS: '8', BATCH_MAX_SECONDS: '10', BATCH_CHALLENGE_WINDOW_SECONDS: '60' },
});
const { get, put } = svc;

let owner: EoaSigner;
let nonce = 0;
let batchId: string;
/** Per case: its template, object and actions (id, name, hash, signature, leaf). */
const made = new Map<
  string,
  {
    template: string;
    object: string;
    actions: { id: string; name: string; hash: string; signature: string; leaf: string }[];
  }
>();
/** The content as the batch sealed it, fetched before any switch. */
let sealedContent: Buffer;
/** Another process's explorer, which kept the content as sealed. */
let other: BatchExplorer;

async function settle() {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}

async function execute(name: string, params: Record<string, unknown>) {
  const res = await svc.post(
    '/ebus/actions',
    await signEoa(svc, owner, { name, params, nonce: nonce++ }),
    owner.headers,
  );
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ action: { id: string; object_id: string; batch_id: string } }>().action;
}

async function setPublic(templateId: string, isPublic: boolean) {
  const res = await put(`/templates/${templateId}`, { is_public: isPublic }, owner.headers);
  expect(res.statusCode, res.body).toBe(200);
}

const leafHash = (leaf: string) =>
  `0x${createHash('sha256')
    .update(Buffer.of(0))
    .update(Buffer.from(leaf.slice(2), 'hex'))
    .digest('hex')}`;

/** The explorer's answers as the SDK reads them, without a network. */
const injected: Source = {
  json: async <T>(path: string) => {
    const res = await get(path);
    if (res.statusCode === 404) return null;
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    return res.json<T>();
  },
  bytes: async (path: string) => {
    const res = await get(path);
    if (res.statusCode === 404) return null;
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    return new Uint8Array(res.rawPayload);
  },
};

beforeAll(async () => {
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  await settle(); // opens the first batch
  for (const c of CASES) {
    const template = await createTemplate(svc, owner.orgId, { isPublic: c.atSeal === 'public' });
    const mint = await execute('mint', { template_id: template, custom: { ssn: secretOf(c) } });
    const update = await execute('update', {
      object_id: mint.object_id,
      custom: { ssn: secretOf(c), again: true },
    });
    made.set(c.key, { template, object: mint.object_id, actions: [mint, update] as never });
    batchId = mint.batch_id;
    expect(update.batch_id).toBe(batchId);
  }
  await settle();
  for (const m of made.values()) {
    m.actions = await Promise.all(
      m.actions.map(async ({ id }) => {
        const { rows } = await svc.container.db.execute<{
          name: string;
          hash: string;
          signature: string;
        }>(sql`SELECT name, hash, signature FROM action_logs WHERE id = ${id}`);
        const opened = await get(`/batches/${batchId}/private-actions/${id}`, owner.headers);
        expect(opened.statusCode, opened.body).toBe(200);
        return { id, ...rows[0]!, leaf: opened.json<{ leaf: string }>().leaf };
      }),
    );
  }
  const sealed = await get(`/batches/${batchId}/content`);
  expect(sealed.statusCode, sealed.body).toBe(200);
  sealedContent = sealed.rawPayload;
  const { rows } = await svc.container.db.execute<{ secret: string }>(
    sql`SELECT secret FROM batch_salt_keys`,
  );
  other = new BatchExplorer(
    svc.container.db,
    svc.container.logger,
    Buffer.from(rows[0]!.secret, 'hex'),
  );
  expect((await other.content(batchId)).equals(sealedContent)).toBe(true);
  // As sealed, the object made private is shown in full.
  expect(sealedContent.toString()).toContain(secretOf(CASES[1]!));
  for (const c of CASES) {
    if (c.now !== c.atSeal) await setPublic(made.get(c.key)!.template, c.now === 'public');
  }
});

/** An action as a route shows it. */
type Shown = { body: string; entry: Record<string, unknown> | undefined };

const ROUTES: Record<string, (actionId: string) => Promise<Shown>> = {
  'GET /batches': async (actionId) => {
    const res = await get('/batches?limit=100');
    const item = res.json<{ batches: BatchRecord[] }>().batches.find((b) => b.id === batchId)!;
    return { body: res.body, entry: item.affected_actions.find((a) => a.id === actionId) };
  },
  'GET /batches/{batchId}': async (actionId) => {
    const res = await get(`/batches/${batchId}`);
    const entry = res.json<BatchRecord>().affected_actions.find((a) => a.id === actionId);
    return { body: res.body, entry };
  },
  'GET /batches/{batchId}/content': async (actionId) => {
    const res = await get(`/batches/${batchId}/content`);
    expect(res.statusCode, res.body).toBe(200);
    const actions = res.json<{ actions: Record<string, unknown>[] }>().actions;
    return { body: res.body, entry: actions.find((a) => a.id === actionId) };
  },
  "GET /batches/{batchId}/content (another process's kept content)": async (actionId) => {
    const body = (await other.content(batchId)).toString('utf8');
    const actions = (JSON.parse(body) as { actions: Record<string, unknown>[] }).actions;
    return { body, entry: actions.find((a) => a.id === actionId) };
  },
  'GET /batches/{batchId}/proofs/{actionId}': async (actionId) => {
    const res = await get(`/batches/${batchId}/proofs/${actionId}`);
    expect(res.statusCode, res.body).toBe(200);
    return { body: res.body, entry: res.json() };
  },
};

/** What `route` must show of an action of case `c` whose leaf is `leaf`. */
function expected(
  route: string,
  c: Case,
  a: { id: string; name: string; hash: string; leaf: string },
) {
  if (route.includes('/proofs/')) {
    // Its leaf, whatever it shows; the salt only to open a commitment to a public history.
    const salt = c.atSeal === 'private' && c.now === 'public';
    return { leaf_hash: leafHash(a.leaf), salt };
  }
  if (route.includes('/content')) {
    if (c.atSeal === 'private') {
      return ['batch_id', 'commitment', 'fee_wei', 'id', 'object_id', 'private'];
    }
    if (c.now === 'private') {
      return ['batch_id', 'fee_wei', 'hash', 'id', 'integrity_hash', 'object_id', 'private'];
    }
    return 'full';
  }
  return shownPrivate(c)
    ? { id: a.id, hash: a.leaf, name: '', private: true }
    : { id: a.id, hash: a.hash, name: a.name, private: false };
}

describe.each(Object.keys(ROUTES))('%s, anonymous', (route) => {
  it.each(CASES.map((c) => [`${c.atSeal} at the seal, ${c.now} now`, c] as const))(
    '%s',
    async (_, c) => {
      const m = made.get(c.key)!;
      for (const a of m.actions) {
        const { body, entry } = await ROUTES[route]!(a.id);
        expect(entry, a.id).toBeDefined();
        const want = expected(route, c, a);
        if (Array.isArray(want)) {
          expect(Object.keys(entry!).sort()).toEqual(want);
          expect(entry!.private).toBe(true);
          if (want.includes('hash')) expect(entry!.hash).toBe(a.hash);
          if (want.includes('commitment')) expect(entry!.commitment).toBe(a.leaf);
        } else if (want === 'full') {
          expect(entry).toMatchObject({ id: a.id, name: a.name, signature: a.signature });
        } else if ('salt' in want) {
          expect(entry).toMatchObject({ leaf_hash: want.leaf_hash });
          expect('salt' in entry!).toBe(want.salt);
        } else {
          expect(entry).toMatchObject(want);
        }
        // Nothing of an object private at either time: no custom data, no signature.
        for (const p of CASES.filter(shownPrivate)) {
          expect(body).not.toContain(secretOf(p));
          for (const x of made.get(p.key)!.actions) expect(body).not.toContain(x.signature);
        }
      }
    },
  );
});

describe('the batch as the public sees it now', () => {
  it('verifies with the SDK, and the list, its record and its content name one ipfs_url', async () => {
    const content = (await get(`/batches/${batchId}/content`)).rawPayload;
    expect(content.equals(sealedContent)).toBe(false);
    const record = (await get(`/batches/${batchId}`)).json<BatchRecord>();
    const list = (await get('/batches?limit=100')).json<{ batches: BatchRecord[] }>().batches;
    const item = list.find((b) => b.id === batchId)!;
    expect(record.ipfs_url).toBe(ipfsUrl(content));
    expect(item.ipfs_url).toBe(record.ipfs_url);
    expect(record.version).toBe(4);
    // The content as sealed stays in the batch's history of CIDs.
    expect(record.superseded_ipfs_urls).toEqual([ipfsUrl(sealedContent)]);
    const { batch_public_key } = (await get('/public/network')).json<{
      batch_public_key: string;
    }>();
    const previous = list.find((b) => b.sequence === record.sequence - 1) ?? null;
    for (const b of [record, item]) {
      expect(await verifyBatch(b, content, { batchPublicKey: batch_public_key, previous })).toEqual(
        { item: `batch ${b.sequence} ${b.id}`, ok: true },
      );
    }
    const report = await verifySealedBatch(injected, item, { previous });
    expect(report.lines.filter((l) => !l.verdict.ok)).toEqual([]);
    // The public objects' chains were replayed, the other two not.
    expect(report.notPublic).toBe(2);
  });

  it('is brought up to date by the sealer, without a read of the batch, when a template switches', async () => {
    const kept = made.get('kept public')!;
    await setPublic(kept.template, false);
    try {
      await settle();
      const list = (await get('/batches?limit=100')).json<{ batches: BatchRecord[] }>();
      const item = list.batches.find((b) => b.id === batchId)!;
      const content = (await get(`/batches/${batchId}/content`)).rawPayload;
      expect(item.ipfs_url).toBe(ipfsUrl(content));
      expect(content.toString()).not.toContain(secretOf(CASES[0]!));
    } finally {
      await setPublic(kept.template, true);
      await settle();
    }
  });
});

describe('made public again', () => {
  it('shows its actions in full again: the content as sealed, under its first CID', async () => {
    const hidden = made.get('made private')!;
    const before = (await get(`/batches/${batchId}`)).json<BatchRecord>();
    await setPublic(hidden.template, true);
    try {
      const content = (await get(`/batches/${batchId}/content`)).rawPayload;
      expect(content.equals(sealedContent)).toBe(true);
      expect((await other.content(batchId)).equals(sealedContent)).toBe(true);
      const record = (await get(`/batches/${batchId}`)).json<BatchRecord>();
      expect(record.ipfs_url).toBe(ipfsUrl(sealedContent));
      // Each former CID once, the one it has now not among them.
      expect(record.superseded_ipfs_urls).toContain(before.ipfs_url);
      expect(record.superseded_ipfs_urls).not.toContain(record.ipfs_url);
      expect(new Set(record.superseded_ipfs_urls).size).toBe(record.superseded_ipfs_urls.length);
      for (const a of hidden.actions) {
        expect(record.affected_actions.find((x) => x.id === a.id)).toMatchObject({
          name: a.name,
          private: false,
        });
      }
    } finally {
      await setPublic(hidden.template, false);
    }
    const again = (await get(`/batches/${batchId}`)).json<BatchRecord>();
    expect(again.ipfs_url).toBe(before.ipfs_url);
    expect(again.superseded_ipfs_urls).toContain(ipfsUrl(sealedContent));
    expect(again.superseded_ipfs_urls).not.toContain(again.ipfs_url);
  });
});
