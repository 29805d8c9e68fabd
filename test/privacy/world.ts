import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect } from 'vitest';
import { allPermissions, createApiKey, type TestApiKey } from '../helpers/api-keys.js';
import {
  createPasskeySigner,
  createSigner,
  fund,
  signEoa,
  signPasskey,
  type EoaSigner,
  type PasskeySigner,
} from '../helpers/ebus.js';
import { createMember, type TestMember } from '../helpers/fixtures.js';
import { useTestService, type HarnessService } from '../helpers/harness.js';
import { memberSteps } from '../helpers/members.js';
import { form } from '../helpers/multipart.js';
import { deposit, randomTxHash } from '../helpers/orgs.js';
import { MARK, needlesOf, PUBLIC_MARK } from './needles.js';

/**
 * One organization with a public and a private template, objects and actions on both (a
 * mint, an update and a transfer on each side; a private object signed by a passkey; one
 * given to a member who owns nothing public), a template made private after its actions were
 * sealed, and everything else it keeps to itself (members, an invitation, an API key, a
 * webhook, a spend policy, a support message, a deposit, a private file), each private field
 * holding a marker (`PRIVATE-MARKER-<random>-…`). Its batches are sealed and proven and the
 * log appended; one more action of each kind waits in the batch still building. What an
 * outsider may not find in an answer is `needles` (test/privacy/needles.ts), and
 * test/privacy/check.ts says where a needle may still appear.
 */
export { MARK, PUBLIC_MARK };
const m = (what: string) => `${MARK}-${what}`;

// A 1×1 PNG; a file's bytes may carry more after its end (the marker).
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

export interface Needle {
  label: string;
  value: string;
  /** Shown by the batch explorer (docs/batches.md, "What is public": a private object's id). */
  explorer?: true;
}

export type Action = {
  id: string;
  hash: string;
  object_id: string;
  batch_id: string;
};

export interface World {
  orgId: string;
  owner: EoaSigner;
  hidden: EoaSigner;
  passkeyPublic: PasskeySigner;
  passkeyPrivate: PasskeySigner;
  keeper: TestMember;
  recipient: string;
  publicTemplate: string;
  privateTemplate: string;
  publicObject: string;
  privateObjects: string[];
  publicActions: Action[];
  privateActions: Action[];
  /** The log's leaf of each private action (its commitment). */
  privateLeaves: string[];
  /**
   * An object of a template made private after its actions were sealed: their action hashes
   * and integrity hashes stay public (docs/batches.md), nothing else of them.
   */
  madePrivate: { template: string; object: string; owner: string; actions: Action[] };
  /** Actions in the batch still building (not in the log yet). */
  pending: { batchId: string; publicAction: Action; privateAction: Action };
  invitation: { id: string; token: string; email: string };
  publicFile: string;
  privateFile: string;
  privateGeoHash: string;
  /** The organization's other records. */
  records: { webhook: string; policy: string; message: string; deposit: string };
  outsider: TestMember;
  outsiderKey: TestApiKey;
  needles: Needle[];
}

/**
 * The preamble of a test file here: a service (small batches, files in a directory of its
 * own) whose world is built in `beforeAll`; `world()` answers it from the first test on.
 */
export function usePrivacyWorld(): { svc: HarnessService; world: () => World } {
  let dir = '';
  let built: World | undefined;
  const svc = useTestService(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ons-privacy-'));
    return {
      env: {
        BATCH_MAX_ACTIONS: '3',
        BATCH_MAX_SECONDS: '10',
        BATCH_CHALLENGE_WINDOW_SECONDS: '60',
        STORAGE_DIR: dir,
      },
    };
  });
  beforeAll(async () => {
    built = await buildWorld(svc);
  }, 120_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    svc,
    world: () => {
      if (!built) throw new Error('usePrivacyWorld: the world is built in beforeAll');
      return built;
    },
  };
}

export async function buildWorld(svc: HarnessService): Promise<World> {
  const nonces = new Map<string, number>();
  const nonce = (walletId: string) => {
    const n = nonces.get(walletId) ?? 0;
    nonces.set(walletId, n + 1);
    return n;
  };
  const owner = await createSigner(svc);
  const orgId = owner.orgId;
  const hidden = await createSigner(svc, { orgId, role: 'member' });
  const passkeyPublic = await createPasskeySigner(svc, { orgId, role: 'member' });
  const passkeyPrivate = await createPasskeySigner(svc, { orgId, role: 'member' });
  const keeper = await createMember(svc, { orgId, role: 'member', email: `${m('email')}@x.test` });
  await svc.container.db.execute(
    sql`UPDATE wallets SET name = ${m('wallet-name')} WHERE id = ${keeper.walletId}`,
  );
  const recipient = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  await fund(svc, orgId, 10n ** 21n + 123_456_789_012_345_678n);
  const credited = await deposit(svc, orgId, '5', randomTxHash());

  // Made while the owner's sign-in is recent (keys need one; docs/api.md, "API keys").
  const apiKey = await createApiKey(svc, owner, ['objects.read', 'actions.read'], {
    name: m('api-key-name'),
  });
  const outsider = await createMember(svc);
  // Every permission a key may hold (keys do not manage keys).
  const outsiderKey = await createApiKey(
    svc,
    outsider,
    allPermissions().filter((p) => !p.startsWith('api-keys.')),
  );

  const ok = async (res: { statusCode: number; body: string }) => {
    expect(res.statusCode, res.body).toBe(200);
    return JSON.parse(res.body) as Record<string, unknown> & { id: string };
  };
  const template = (isPublic: boolean, what: string) =>
    svc.post(
      '/templates',
      {
        name: `${what}-name`,
        description: `${what}-description`,
        category: `${what}-category`,
        faces: [{ id: 'front', url: `https://x.test/${what}.png`, config: {}, content: what }],
        actions: ['mint', 'transfer', 'update'],
        is_public: isPublic,
      },
      owner.headers,
    );
  const publicTemplate = (await ok(await template(true, PUBLIC_MARK))).id;
  const privateTemplate = (await ok(await template(false, m('template')))).id;
  // Public while its actions are sealed, private from then on (docs/batches.md, "An object
  // made private later").
  const laterTemplate = (await ok(await template(true, m('later-template')))).id;

  const upload = async (isPublic: boolean, what: string) => {
    const f = form([
      { name: 'file', filename: `${what}.png`, data: Buffer.concat([PNG, Buffer.from(what)]) },
      { name: 'is_public', data: String(isPublic) },
    ]);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/storage/upload',
      headers: { ...owner.headers, 'content-type': f.type },
      payload: f.payload,
    });
    return ok(res);
  };
  const publicFile = (await upload(true, PUBLIC_MARK)).id;
  const privateImage = await upload(false, m('file'));

  const eoa = async (s: EoaSigner, name: string, params: Record<string, unknown>) => {
    const body = await signEoa(svc, s, { name, params, nonce: nonce(s.walletId) });
    return (await ok(await svc.post('/ebus/actions', body, s.headers))).action as Action;
  };
  const passkey = async (s: PasskeySigner, name: string, params: Record<string, unknown>) => {
    const body = signPasskey(svc, s, { name, params, nonce: nonce(s.walletId) });
    return (await ok(await svc.post('/ebus/actions', body, s.headers))).action as Action;
  };

  const publicActions: Action[] = [];
  const privateActions: Action[] = [];
  const pub = async (a: Promise<Action>) => (publicActions.push(await a), (await a).object_id);
  const priv = async (a: Promise<Action>) => (privateActions.push(await a), (await a).object_id);

  const publicObject = await pub(
    eoa(owner, 'mint', {
      template_id: publicTemplate,
      custom: { note: PUBLIC_MARK },
      metadata: { name: `${PUBLIC_MARK}-object` },
    }),
  );
  await pub(
    eoa(owner, 'update', { object_id: publicObject, custom: { note: `${PUBLIC_MARK}-2` } }),
  );
  const publicPasskeyObject = await pub(
    passkey(passkeyPublic, 'mint', { template_id: publicTemplate }),
  );
  // A: minted, updated and given away by a member who acts on nothing public.
  const location = { latitude: 12.3456, longitude: 65.4321 };
  const a = await priv(
    eoa(hidden, 'mint', {
      template_id: privateTemplate,
      custom: { ssn: m('custom-mint') },
      metadata: { name: m('meta-name'), description: m('meta-description'), image: privateImage },
      collection_id: m('collection'),
      location,
    }),
  );
  await priv(eoa(hidden, 'update', { object_id: a, custom: { ssn: m('custom-update') } }));
  await priv(eoa(hidden, 'transfer', { object_id: a, to: recipient }));
  // B: signed with a passkey that signs nothing public.
  const b = await priv(passkey(passkeyPrivate, 'mint', { template_id: privateTemplate }));
  // C: minted by the organization's public signer, for a member who owns nothing public.
  const c = await priv(
    eoa(owner, 'mint', {
      template_id: privateTemplate,
      owner: keeper.address,
      custom: { code: m('custom-c') },
    }),
  );
  await pub(
    eoa(owner, 'transfer', {
      object_id: publicObject,
      to: privateKeyToAccount(generatePrivateKey()).address,
    }),
  );
  const laterOwner = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  const laterMint = await eoa(owner, 'mint', {
    template_id: laterTemplate,
    owner: laterOwner,
    custom: { ssn: m('later') },
  });
  const laterActions = [laterMint];

  // What the organization keeps to itself besides its objects.
  const steps = memberSteps(() => svc);
  const inviteEmail = `${m('invited')}@x.test`;
  const invitation = { ...(await steps.invite(owner, inviteEmail)), email: inviteEmail };
  const webhook = await ok(
    await svc.post(
      '/webhooks',
      { url: `https://93.184.215.14/${m('webhook')}`, rules: [{ template_id: privateTemplate }] },
      owner.headers,
    ),
  );
  const policy = await ok(
    await svc.post(
      '/policies',
      {
        target_type: 'template',
        target_id: privateTemplate,
        name: m('policy'),
        max_fee_wei: '1000000000000000000',
      },
      owner.headers,
    ),
  );
  const message = await ok(
    await svc.post('/support', { title: m('support-title'), content: m('support') }, owner.headers),
  );

  // Sealed, proven and in the log.
  await settle(svc);
  const logged = await svc.container.db.execute<Action & { leaf: string }>(sql`
    SELECT a.id, a.hash, a.object_id, a.batch_id, '0x' || encode(e.leaf, 'hex') AS leaf
    FROM action_logs a JOIN log_entries e ON e.action_id = a.id ORDER BY a.seq`);
  const byId = new Map(logged.rows.map((r) => [r.id, r]));
  expect(byId.size).toBe(publicActions.length + privateActions.length + laterActions.length);
  for (const list of [publicActions, privateActions, laterActions]) {
    for (const x of list) x.batch_id = byId.get(x.id)!.batch_id;
  }
  const privateLeaves = privateActions.map((x) => byId.get(x.id)!.leaf);
  // The switch; the sealer publishes the batches that hold its actions anew.
  await ok(await svc.put(`/templates/${laterTemplate}`, { is_public: false }, owner.headers));
  await settle(svc);
  // And one of each in the batch still building.
  const pendingPrivate = await passkey(passkeyPrivate, 'update', {
    object_id: b,
    custom: { ssn: m('pending') },
  });
  const pendingPublic = await passkey(passkeyPublic, 'update', {
    object_id: publicPasskeyObject,
    custom: { note: PUBLIC_MARK },
  });
  const building = await svc.container.db.execute<{ batch_id: string }>(
    sql`SELECT batch_id FROM action_logs WHERE id = ${pendingPrivate.id}`,
  );
  const pending = {
    batchId: building.rows[0]!.batch_id,
    publicAction: pendingPublic,
    privateAction: pendingPrivate,
  };

  const world: Omit<World, 'needles'> = {
    orgId,
    owner,
    hidden,
    passkeyPublic,
    passkeyPrivate,
    keeper,
    recipient,
    publicTemplate,
    privateTemplate,
    publicObject,
    privateObjects: [a, b, c],
    madePrivate: {
      template: laterTemplate,
      object: laterMint.object_id,
      owner: laterOwner,
      actions: laterActions,
    },
    publicActions,
    privateActions,
    privateLeaves,
    pending,
    invitation,
    publicFile,
    privateFile: privateImage.id,
    privateGeoHash: '',
    records: {
      webhook: webhook.id,
      policy: policy.id,
      message: message.id,
      deposit: (credited as { deposit: { id: string } }).deposit.id,
    },
    outsider,
    outsiderKey,
  };
  const objects = await svc.container.db.execute<{ geo_hash: string | null }>(
    sql`SELECT geo_hash FROM objects WHERE id = ${a}`,
  );
  world.privateGeoHash = objects.rows[0]!.geo_hash!;
  const needles = await needlesOf(svc, world, {
    apiKey,
    webhook: webhook as unknown as { id: string; signing_key: string },
    policyId: policy.id,
    messageId: message.id,
    depositId: world.records.deposit,
    privateFileHash: String(privateImage.hash),
  });
  return { ...world, needles };
}

/** Seals and proves every batch with actions, and appends them to the log. */
export async function settle(svc: HarnessService) {
  svc.clock.advance(11_000);
  for (let i = 0; i < 30 && (await svc.container.batches.sealer.tick()); i++);
}
