import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import { contentBytes, headerOfRow } from '../../src/modules/batches/content.js';
import { verifyInclusion, type InclusionProof } from '../../src/lib/merkle.js';
import { ipfsUrl } from '../../src/modules/batches/formulas.js';
import * as batchRepo from '../../src/modules/batches/repo/batches.js';
import { batchActions } from '../../src/modules/ebus/index.js';
import {
  verifyBatch,
  verifyPrivateAction,
  type BatchRecord,
  type PrivateActionRecord,
} from '../../sdk/src/verify/index.js';
import { createApiKey } from '../helpers/api-keys.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';
import { useTestService } from '../helpers/harness.js';

/**
 * Issue 27, item 3: nothing private in public. An organization that acts only on a private
 * object mints a secret into it, updates it with another and transfers it; then every route
 * an anonymous caller can reach (walked from the route table, so a route added later is
 * walked too) is called with every id the public answers reveal, and no answer may hold,
 * byte for byte, anything of the private object: its custom data, metadata, owner, wallet,
 * organization, template, signatures, action hashes or integrity hashes.
 */
const SECRET = 'SECRET-123-45-6789';
const SECRET_2 = 'SECRET-987-65-4321';
const SECRET_NAME = 'SECRET-META-NAME-Quartz';
const SECRET_TEMPLATE = 'SECRET-TEMPLATE-Lichen';

let publicOrg: EoaSigner;
let hidden: EoaSigner;
let recipient: string;
let privateTemplate: string;
let publicTemplate: string;
let privateObject: string;
/** The private object's actions: id → batch id. */
const privateActions = new Map<string, string>();
const nonces = new Map<string, number>();
const next = (s: EoaSigner) => {
  const n = nonces.get(s.walletId) ?? 0;
  nonces.set(s.walletId, n + 1);
  return n;
};

async function execute(signer: EoaSigner, name: string, params: Record<string, unknown>) {
  const res = await svc.app.inject({
    method: 'POST',
    url: '/ebus/actions',
    headers: signer.headers,
    payload: await signEoa(svc, signer, { name, params, nonce: next(signer) }),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ action: { id: string; object_id: string } }>().action;
}

/** Seals and proves every batch with actions, and re-publishes what is due. */
async function settle() {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}

const svc = useTestService({
  env: { BATCH_MAX_ACTIONS: '3', BATCH_MAX_SECONDS: '10', BATCH_CHALLENGE_WINDOW_SECONDS: '60' },
});
const { get } = svc;
beforeAll(async () => {
  publicOrg = await createSigner(svc);
  hidden = await createSigner(svc);
  recipient = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  await fund(svc, publicOrg.orgId, 10n ** 21n);
  await fund(svc, hidden.orgId, 10n ** 21n);
  publicTemplate = await createTemplate(svc, publicOrg.orgId);
  privateTemplate = await createTemplate(svc, hidden.orgId, { isPublic: false });
  await svc.container.db.execute(
    sql`UPDATE templates SET name = ${SECRET_TEMPLATE}, description = ${SECRET_TEMPLATE}
      WHERE id = ${privateTemplate}`,
  );

  // The first batch is sealed with content version 2, as a batch sealed before migration
  // 0021: it is re-published (version 3) as soon as its header is written.
  await settle();
  await svc.container.db.execute(sql`UPDATE batches SET version = 2 WHERE status = 'building'`);
  const mint = await execute(hidden, 'mint', {
    template_id: privateTemplate,
    custom: { ssn: SECRET },
    metadata: { name: SECRET_NAME, description: SECRET_NAME },
  });
  privateObject = mint.object_id;
  privateActions.set(mint.id, '');
  await execute(publicOrg, 'mint', { template_id: publicTemplate, custom: { note: 'public' } });
  await settle();
  // Version 4 batches from here on.
  await execute(publicOrg, 'mint', { template_id: publicTemplate });
  const update = await execute(hidden, 'update', {
    object_id: privateObject,
    custom: { ssn: SECRET_2 },
  });
  privateActions.set(update.id, '');
  await execute(publicOrg, 'mint', { template_id: publicTemplate });
  const transfer = await execute(hidden, 'transfer', { object_id: privateObject, to: recipient });
  privateActions.set(transfer.id, '');
  await settle();
  for (const id of privateActions.keys()) {
    const { rows } = await svc.container.db.execute<{ batch_id: string }>(
      sql`SELECT batch_id FROM action_logs WHERE id = ${id}`,
    );
    privateActions.set(id, rows[0]!.batch_id);
  }
});

/** Everything of the private object and of the organization that acts on it. */
async function needles(): Promise<string[]> {
  const db = svc.container.db;
  const { rows: actions } = await db.execute<{
    hash: string;
    signature: string;
    integrity_hash: string;
  }>(sql`SELECT hash, signature, integrity_hash FROM action_logs
    WHERE object_id = ${privateObject} ORDER BY seq`);
  const { rows: objects } = await db.execute<{
    state_hash: string;
    content_hash: string;
    integrity_hash: string;
  }>(sql`SELECT state_hash, content_hash, integrity_hash FROM objects WHERE id = ${privateObject}`);
  // The action hash and integrity hash of the actions in version 4 batches: the mint's are in
  // the re-published batch, whose header committed to them before this change (docs/batches.md).
  const v4Hashes = actions.slice(1).flatMap((a) => [a.hash, a.integrity_hash]);
  return [
    SECRET,
    SECRET_2,
    SECRET_NAME,
    SECRET_TEMPLATE,
    privateTemplate,
    hidden.orgId,
    hidden.address,
    hidden.walletId,
    recipient,
    ...actions.map((a) => a.signature),
    ...v4Hashes,
    objects[0]!.state_hash,
    objects[0]!.content_hash,
    objects[0]!.integrity_hash,
  ];
}

/** Ids an anonymous caller finds in an answer (and may then ask about). */
const ID_RE = /\b(?:obj|tpl|act|bat|org|wal|crd|fil|mem)_[0-9A-Za-z]{10,40}\b|0x[0-9a-f]{40}\b/g;

/** Values to put into a route's path parameter, by its name. */
function candidates(param: string, found: Set<string>): string[] {
  const all = [...found];
  const byPrefix = (p: string) => all.filter((v) => v.startsWith(p));
  switch (param) {
    case 'batchId':
      return byPrefix('bat_');
    case 'actionId':
      return byPrefix('act_');
    case 'credentialId':
      return byPrefix('crd_');
    case 'address':
    case 'signer':
      return all.filter((v) => v.startsWith('0x'));
    case 'version':
      return ['1', '2'];
    case 'organizationId':
      return byPrefix('org_');
    case 'memberId':
      return byPrefix('mem_');
    case 'id':
      return all.filter((v) => /^(obj|tpl|fil|bat|act)_/.test(v));
    default:
      return all.slice(0, 20);
  }
}

/** Every URL of a route with its parameters filled from `found` (each combination). */
function urlsOf(url: string, found: Set<string>): string[] {
  const params = [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  let urls = [url.replace(/\*$/, 'index.html')];
  for (const p of params) {
    urls = urls.flatMap((u) => candidates(p, found).map((v) => u.replace(`:${p}`, v)));
  }
  return urls;
}

describe('no anonymous answer holds anything of a private object', () => {
  it('walks every route without a credential with every id the public answers reveal', async () => {
    const anonymous = svc.routeTable().filter((r) => r.auth === 'none' || r.auth === 'optional');
    // The explorer's routes are among them (a route table without them would prove nothing).
    for (const url of [
      '/batches',
      '/batches/:batchId',
      '/batches/:batchId/content',
      '/batches/:batchId/proofs/:actionId',
      '/public/objects',
      '/public/objects/:id/history',
      '/public/templates/:id',
    ]) {
      expect(anonymous.map((r) => r.url)).toContain(url);
    }
    const secret = await needles();
    // What an attacker may know without a leak: the private object's id (printed on it) and
    // what the public answers name.
    const found = new Set<string>([privateObject, privateTemplate]);
    const seen = new Set<string>();
    const leaks: string[] = [];
    let calls = 0;
    let ok = 0;
    for (let round = 0; round < 3; round++) {
      for (const r of anonymous) {
        const queries =
          r.method === 'GET' && !r.url.includes(':')
            ? ['', '?limit=100', `?id=${privateObject}`, `?template_id=${privateTemplate}`]
            : [''];
        for (const base of urlsOf(r.url, found)) {
          for (const q of queries) {
            const url = `${base}${q}`;
            const key = `${r.method} ${url}`;
            if (seen.has(key)) continue;
            seen.add(key);
            const res = await svc.app.inject({
              method: r.method as 'GET',
              url,
              ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { payload: {} }),
            });
            calls++;
            if (res.statusCode === 200) ok++;
            const body = res.body;
            // A value the caller put in the URL may come back (an echo is no leak).
            for (const n of secret) {
              if (!url.includes(n) && body.includes(n)) leaks.push(`${key} → ${n}`);
            }
            for (const m of body.matchAll(ID_RE)) found.add(m[0]);
          }
        }
      }
    }
    expect(leaks).toEqual([]);
    // The walk reached the private actions' batches, contents and proofs.
    for (const [action, batch] of privateActions) {
      expect(seen).toContain(`GET /batches/${batch}/content`);
      expect(seen).toContain(`GET /batches/${batch}/proofs/${action}`);
    }
    expect(calls).toBeGreaterThan(100);
    expect(ok).toBeGreaterThan(30);
  });

  it('shows a private action in the explorer as its id, object and leaf only', async () => {
    const [mint, update] = [...privateActions.keys()];
    const batch = (await get(`/batches/${privateActions.get(update!)}`)).json<BatchRecord>();
    expect(batch.version).toBe(4);
    const entry = batch.affected_actions.find((a) => a.id === update)!;
    expect(entry).toMatchObject({ name: '', alias: privateObject, private: true });
    const first = (await get(`/batches/${privateActions.get(mint!)}`)).json<BatchRecord>();
    expect(first.version).toBe(3);
    expect(first.affected_actions.find((a) => a.id === mint)).toMatchObject({
      name: '',
      private: true,
    });
    // A public action is shown as before.
    expect(batch.affected_actions.some((a) => !a.private && a.name === 'mint')).toBe(true);
  });
});

describe("a sealed batch's private actions", () => {
  it('stay as its header sealed them when the object is made public later', async () => {
    const update = [...privateActions.keys()][1]!;
    const batchId = privateActions.get(update)!;
    const before = (await get(`/batches/${batchId}/content`)).rawPayload;
    await svc.container.db.execute(
      sql`UPDATE objects SET is_public = true WHERE id = ${privateObject}`,
    );
    try {
      const after = await get(`/batches/${batchId}/content`);
      expect(after.statusCode).toBe(200);
      expect(after.rawPayload.equals(before)).toBe(true);
      const b = (await get(`/batches/${batchId}`)).json<BatchRecord>();
      expect(b.affected_actions.find((a) => a.id === update)).toMatchObject({ private: true });
      const proof = await get(`/batches/${batchId}/proofs/${update}`);
      expect(proof.statusCode).toBe(200);
    } finally {
      await svc.container.db.execute(
        sql`UPDATE objects SET is_public = false WHERE id = ${privateObject}`,
      );
    }
  });
});

describe('a batch still building', () => {
  it('lists an action on a private object as private, as its object is now', async () => {
    const action = await execute(hidden, 'mint', {
      template_id: privateTemplate,
      custom: { ssn: 'SECRET-building' },
    });
    const { rows } = await svc.container.db.execute<{ batch_id: string }>(
      sql`SELECT batch_id FROM action_logs WHERE id = ${action.id}`,
    );
    const res = await get(`/batches/${rows[0]!.batch_id}`);
    const b = res.json<BatchRecord>();
    expect(b.status).toBe('building');
    expect(b.affected_actions.find((a) => a.id === action.id)).toMatchObject({
      name: '',
      private: true,
      alias: action.object_id,
    });
    expect(res.body).not.toContain('SECRET-building');
    expect((await get(`/batches/${b.id}/content`)).statusCode).toBe(404);
  });
});

describe('the batches still verify', () => {
  it('every sealed batch passes the SDK verifier, and the private leaves are commitments', async () => {
    const { batch_public_key } = (await get('/public/network')).json<{
      batch_public_key: string;
    }>();
    const list = (await get('/batches?limit=100')).json<{ batches: BatchRecord[] }>().batches;
    const sealed = list.filter((b) => b.hash !== '').sort((a, b) => a.sequence - b.sequence);
    expect(sealed.map((b) => b.version)).toContain(3);
    expect(sealed.map((b) => b.version)).toContain(4);
    let previous: BatchRecord | null = null;
    for (const b of sealed) {
      const content = (await get(`/batches/${b.id}/content`)).rawPayload;
      const verdict = await verifyBatch(b, content, { batchPublicKey: batch_public_key, previous });
      expect(verdict, b.id).toEqual({ item: `batch ${b.sequence} ${b.id}`, ok: true });
      // One changed byte of a private record is caught.
      const text = content.toString('utf8');
      const at = text.indexOf('"commitment":"0x');
      if (at >= 0) {
        const i = at + 20;
        const flipped = `${text.slice(0, i)}${text[i] === 'a' ? 'b' : 'a'}${text.slice(i + 1)}`;
        const bad = await verifyBatch(b, Buffer.from(flipped), {
          batchPublicKey: batch_public_key,
          previous,
        });
        expect(bad.ok).toBe(false);
      }
      previous = b;
    }
  });

  it('an anonymous inclusion proof of a private action starts from its commitment', async () => {
    const update = [...privateActions.keys()][1]!;
    const batchId = privateActions.get(update)!;
    const proof = (await get(`/batches/${batchId}/proofs/${update}`)).json<InclusionProof>();
    const batch = (await get(`/batches/${batchId}`)).json<BatchRecord>();
    expect(proof.root).toBe(batch.actions_hash);
    const { rows } = await svc.container.db.execute<{ hash: string }>(
      sql`SELECT hash FROM action_logs WHERE id = ${update}`,
    );
    const leafOf = (data: string) =>
      `0x${createHash('sha256')
        .update(Buffer.of(0))
        .update(Buffer.from(data.slice(2), 'hex'))
        .digest('hex')}`;
    expect(proof.leaf_hash).not.toBe(leafOf(rows[0]!.hash));
    const mine = (await get(`/batches/${batchId}/private-actions/${update}`, hidden.headers)).json<{
      commitment: string;
    }>();
    expect(proof.leaf_hash).toBe(leafOf(mine.commitment));
    // The audit path leads from the commitment to actions_hash (RFC 9162 §2.1.3.2).
    expect(verifyInclusion(proof, Buffer.from(mine.commitment.slice(2), 'hex'))).toBe(true);
    expect(verifyInclusion(proof, Buffer.from(rows[0]!.hash.slice(2), 'hex'))).toBe(false);
  });
});

describe('GET /batches/{batchId}/private-actions/{actionId}', () => {
  const url = (action: string) =>
    `/batches/${privateActions.get(action)}/private-actions/${action}`;

  it("answers a member of the action's organization its full record and the salt that opens its commitment", async () => {
    const update = [...privateActions.keys()][1]!;
    const res = await get(url(update), hidden.headers);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<{
      action: { id: string; hash: string; params: { custom: { ssn: string } }; wallet: string };
      integrity_hash: string;
      private: boolean;
      version: number;
      salt: string;
      commitment: string;
      leaf: string;
    }>();
    expect(body.action.params.custom.ssn).toBe(SECRET_2);
    expect(body.action.wallet).toBe(hidden.address);
    expect(body).toMatchObject({ private: true, version: 4 });
    // The commitment, recomputed here from the salt, the action hash and the integrity hash.
    const raw = (h: string) => Buffer.from(h.slice(2), 'hex');
    const expected = `0x${createHash('sha256')
      .update('ons private action v1\u0000')
      .update(raw(body.salt))
      .update(raw(body.action.hash))
      .update(raw(body.integrity_hash))
      .digest('hex')}`;
    expect(body.commitment).toBe(expected);
    expect(body.leaf).toBe(expected);
    // The salt is the HMAC of the action id under the service's salt key, never served.
    const { rows } = await svc.container.db.execute<{ secret: string }>(
      sql`SELECT secret FROM batch_salt_keys`,
    );
    const salt = createHmac('sha256', Buffer.from(rows[0]!.secret, 'hex'))
      .update('ons action salt v1\u0000')
      .update(update)
      .digest('hex');
    expect(body.salt).toBe(`0x${salt}`);
    const batch = (await get(`/batches/${privateActions.get(update)}`)).json<BatchRecord>();
    // The SDK rebuilds the text, its hash and the commitment, and checks the signature and
    // the public proof.
    const opening = res.json<PrivateActionRecord>();
    const proof = (await get(`/batches/${batch.id}/proofs/${update}`)).json<InclusionProof>();
    const { network } = (await get('/public/network')).json<{ network: string }>();
    const checks = { context: { network, credential: () => Promise.resolve(null) }, proof };
    expect(await verifyPrivateAction(opening, batch, checks)).toEqual({
      item: `private action ${update} in ${batch.id}`,
      ok: true,
      skipped: ['integrity_hash'],
    });
    const zeroSalt = { ...opening, salt: `0x${'00'.repeat(32)}` };
    expect((await verifyPrivateAction(zeroSalt, batch, checks)).failed).toBe('commitment');
    const params = { ...opening.action.params, custom: { ssn: 'other' } };
    const changed = { ...opening, action: { ...opening.action, params } };
    expect((await verifyPrivateAction(changed, batch, checks)).failed).toBe('hash');
  });

  it('answers a re-published (version 3) action with its hash as its leaf and no salt', async () => {
    const mint = [...privateActions.keys()][0]!;
    const body = (await get(url(mint), hidden.headers)).json<{
      action: { hash: string };
      version: number;
      salt: string | null;
      leaf: string;
    }>();
    expect(body).toMatchObject({ version: 3, salt: null, leaf: body.action.hash });
  });

  it('is refused to another organization, a key without objects.read, and nobody', async () => {
    const update = [...privateActions.keys()][1]!;
    const other = await get(url(update), publicOrg.headers);
    expect([other.statusCode, other.json().code]).toEqual([404, 5]);
    expect(other.body).not.toContain(SECRET_2);
    const narrow = await createApiKey(svc, hidden, ['actions.read']);
    const refused = await get(url(update), narrow.headers);
    expect([refused.statusCode, refused.json().code]).toEqual([403, 7]);
    const reader = await createApiKey(svc, hidden, ['objects.read']);
    expect((await get(url(update), reader.headers)).statusCode).toBe(200);
    const anonymous = await get(url(update));
    expect([anonymous.statusCode, anonymous.json().code]).toEqual([401, 16]);
  });

  it('answers 404 for an action of another batch and 400 for a malformed id', async () => {
    const [mint, update] = [...privateActions.keys()];
    const wrong = await get(
      `/batches/${privateActions.get(mint!)}/private-actions/${update}`,
      hidden.headers,
    );
    expect([wrong.statusCode, wrong.json().code]).toEqual([404, 5]);
    const bad = await get(`/batches/nope/private-actions/${update}`, hidden.headers);
    expect([bad.statusCode, bad.json().code]).toEqual([400, 3]);
  });
});

describe('re-publishing a batch sealed with private data', () => {
  it('keeps the former CID as history, and the header, proof and chain as they were', async () => {
    const mint = [...privateActions.keys()][0]!;
    const row = (await batchRepo.findBatch(svc.container.db, privateActions.get(mint)!))!;
    expect(row.version).toBe(3);
    expect(row.republish).toBe(false);
    expect(row.private_actions).toEqual([mint]);
    // The former CID is the version 2 content's, which showed the secret.
    const actions = await batchActions(svc.container.db, row.id);
    const old = contentBytes(2, headerOfRow(row), row.hash!, actions);
    expect(old.toString('utf8')).toContain(SECRET);
    expect(row.superseded_ipfs_urls).toEqual([ipfsUrl(old)]);
    const served = (await get(`/batches/${row.id}`)).json<BatchRecord>();
    expect(served.superseded_ipfs_urls).toEqual([ipfsUrl(old)]);
    expect(served.ipfs_url).not.toBe(ipfsUrl(old));
  });

  it("the migration flags every sealed batch that holds a private object's action", async () => {
    const db = svc.container.db;
    await db.execute(sql`UPDATE batches SET private_actions = NULL, republish = false`);
    const migration = readFileSync(
      new URL('../../src/db/migrations/0021_private_batches.sql', import.meta.url),
      'utf8',
    );
    const statement = /UPDATE batches b SET private_actions[\s\S]*?;/.exec(migration)![0];
    await db.execute(sql.raw(statement));
    const { rows } = await db.execute<{ id: string; republish: boolean; n: number }>(
      sql`SELECT id, republish, cardinality(private_actions) AS n FROM batches
        WHERE hash IS NOT NULL ORDER BY sequence`,
    );
    const withPrivate = new Set(privateActions.values());
    expect(rows.length).toBeGreaterThan(2);
    for (const r of rows) {
      expect([r.id, r.republish, r.n > 0]).toEqual([
        r.id,
        withPrivate.has(r.id),
        withPrivate.has(r.id),
      ]);
    }
    // While flagged, a content is not served (it would show the private actions as sealed).
    const flagged = rows.find((r) => r.republish)!;
    expect((await get(`/batches/${flagged.id}/content`)).statusCode).toBe(404);
    await db.execute(sql`UPDATE batches SET republish = false`);
  });
});
