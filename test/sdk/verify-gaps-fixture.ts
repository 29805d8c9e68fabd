import { sql } from 'drizzle-orm';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { newId } from '../../src/lib/ids.js';
import {
  createPasskeySigner,
  createSigner,
  createTemplate,
  fund,
  signEoa,
  signPasskey,
  type EoaSigner,
  type PasskeySigner,
} from '../helpers/ebus.js';
import { startLiveService, type LiveService } from './live-service.js';

/**
 * The network of the verifier's three gaps: a wallet signing with an EOA linked to it
 * (unlinked afterwards), a template changed after actions on its objects, a private object
 * in every batch, and a first batch sealed with content version 1 (as before version 2).
 * Batches hold at most 3 execution numbers; in order of execution:
 * mint A (owner), transfer A → member (owner), mint P private (owner) — batch 1, version 1;
 * the template's name and faces change (version 2);
 * update A (member, signed by its linked EOA), mint B (owner), update P (owner);
 * the linked EOA is removed;
 * update B (owner), redeem A (member, passkey); the last batch is sealed by time.
 * (The first action after the template change takes two numbers: its optimistic attempt,
 * guarded by the remembered template, is retried on the locked path. So which batch holds
 * what after batch 1 is not fixed here; tests look it up.)
 */
export interface GapsNetwork {
  live: LiveService;
  owner: EoaSigner;
  member: PasskeySigner;
  /** The EOA linked to `member`'s wallet (not its address). */
  linked: PrivateKeyAccount;
  /** The `credentials` row id of the link. */
  linkId: string;
  template: string;
  hidden: string;
  publicA: string;
  publicB: string;
  privateP: string;
  /** Sequence 1..3. */
  batchIds: string[];
}

export const FACES_V1 = [{ id: 'front', url: 'https://x.test/v1.png', config: {}, content: '' }];
export const FACES_V2 = [
  { id: 'front', url: 'https://x.test/v2.png', config: { tint: 'gold' }, content: 'v2' },
];

export async function buildGapsNetwork(): Promise<GapsNetwork> {
  const live = await startLiveService({
    env: { BATCH_MAX_ACTIONS: '3', BATCH_MAX_SECONDS: '10', BATCH_CHALLENGE_WINDOW_SECONDS: '60' },
  });
  const { svc } = live;
  const db = svc.container.db;
  const owner = await createSigner(svc);
  const member = await createPasskeySigner(svc, { orgId: owner.orgId });
  const linked = privateKeyToAccount(generatePrivateKey());
  const linkId = newId('credential');
  await db.execute(sql`INSERT INTO credentials (id, wallet_id, type, external_id, created_at)
    VALUES (${linkId}, ${member.walletId}, 'eoa', ${linked.address.toLowerCase()},
      ${svc.clock.now()})`);
  svc.clock.advance(1000);
  await fund(svc, owner.orgId, 10n ** 21n);
  const template = await createTemplate(svc, owner.orgId, { faces: FACES_V1 });
  const hidden = await createTemplate(svc, owner.orgId, { isPublic: false });

  const settle = async () => {
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
  };
  // The first batch is sealed with content version 1, as batches sealed before version 2.
  await settle();
  await db.execute(sql`UPDATE batches SET version = 1 WHERE status = 'building'`);

  const nonces = new Map<string, number>();
  const next = (walletId: string) => {
    const n = nonces.get(walletId) ?? 0;
    nonces.set(walletId, n + 1);
    return n;
  };
  /** `signer`: the owner, the member with its passkey, or the member's linked EOA. */
  const run = async (
    signer: 'owner' | 'passkey' | 'linked',
    name: string,
    params: Record<string, unknown>,
  ) => {
    const who = signer === 'owner' ? owner : member;
    const a = { name, params, nonce: next(who.walletId) };
    const body =
      signer === 'owner'
        ? await signEoa(svc, owner, a)
        : signer === 'linked'
          ? await signEoa(svc, { ...member, account: linked }, { ...a, wallet: member.address })
          : signPasskey(svc, member, a);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: who.headers,
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.body}`);
    svc.clock.advance(1000);
    return res.json<{ object: { id: string } }>().object.id;
  };

  const publicA = await run('owner', 'mint', { template_id: template, custom: { seat: '1A' } });
  await run('owner', 'transfer', { object_id: publicA, to: member.address });
  const privateP = await run('owner', 'mint', { template_id: hidden });
  await settle();

  const put = await svc.app.inject({
    method: 'PUT',
    url: `/templates/${template}`,
    headers: owner.headers,
    payload: { name: 'Ticket, gold', faces: FACES_V2 },
  });
  if (put.statusCode !== 200) throw new Error(`PUT template: ${put.body}`);
  svc.clock.advance(1000);

  await run('linked', 'update', { object_id: publicA, custom: { seat: '2B' } });
  const publicB = await run('owner', 'mint', { template_id: template });
  await run('owner', 'update', { object_id: privateP, custom: { note: 'private' } });
  await settle();

  const unlink = await svc.app.inject({
    method: 'DELETE',
    url: `/wallets/me/credentials/${linkId}`,
    headers: member.headers,
  });
  if (unlink.statusCode !== 200) throw new Error(`unlink: ${unlink.body}`);
  svc.clock.advance(1000);

  await run('owner', 'update', { object_id: publicB, custom: { seat: '3C' } });
  await run('passkey', 'redeem', { object_id: publicA });
  await settle();
  svc.clock.advance(11_000);
  await settle();

  const { rows } = await db.execute<{ id: string }>(
    sql`SELECT id FROM batches WHERE hash IS NOT NULL ORDER BY sequence`,
  );
  return {
    live,
    owner,
    member,
    linked,
    linkId,
    template,
    hidden,
    publicA,
    publicB,
    privateP,
    batchIds: rows.map((r) => r.id),
  };
}
