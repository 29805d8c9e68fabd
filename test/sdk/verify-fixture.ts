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
 * A small network for the verifier's tests: two public objects moved by an EOA and a
 * passkey, one private object, sealed into batches of at most 3 actions.
 */
export interface VerifyNetwork {
  live: LiveService;
  owner: EoaSigner;
  passkey: PasskeySigner;
  /** A passkey registered in the same organization that never signed an action. */
  idle: PasskeySigner;
  publicA: string;
  publicB: string;
  privateC: string;
}

export async function buildNetwork(env: Record<string, string> = {}): Promise<VerifyNetwork> {
  const live = await startLiveService({
    env: {
      BATCH_MAX_ACTIONS: '3',
      BATCH_MAX_SECONDS: '10',
      BATCH_CHALLENGE_WINDOW_SECONDS: '60',
      ...env,
    },
  });
  const { svc } = live;
  const owner = await createSigner(svc);
  const passkey = await createPasskeySigner(svc, { orgId: owner.orgId });
  const idle = await createPasskeySigner(svc, { orgId: owner.orgId });
  await fund(svc, owner.orgId, 10n ** 21n);
  const template = await createTemplate(svc, owner.orgId);
  const hidden = await createTemplate(svc, owner.orgId, { isPublic: false });
  const nonces = new Map<string, number>();
  const next = (walletId: string) => {
    const n = nonces.get(walletId) ?? 0;
    nonces.set(walletId, n + 1);
    return n;
  };
  const run = async (
    signer: EoaSigner | PasskeySigner,
    name: string,
    params: Record<string, unknown>,
  ) => {
    const a = { name, params, nonce: next(signer.walletId) };
    const body = 'account' in signer ? await signEoa(svc, signer, a) : signPasskey(svc, signer, a);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: signer.headers,
      payload: body,
    });
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.body}`);
    svc.clock.advance(1000);
    return res.json<{ object: { id: string } }>().object.id;
  };
  const publicA = await run(owner, 'mint', {
    template_id: template,
    custom: { seat: '12A' },
    location: { latitude: 52.52, longitude: 13.405 },
  });
  await run(owner, 'update', {
    object_id: publicA,
    custom: { seat: '14C' },
    metadata: { name: 'VIP' },
  });
  await run(owner, 'transfer', { object_id: publicA, to: passkey.address });
  await run(passkey, 'drop', {
    object_id: publicA,
    location: { latitude: -33.9, longitude: 151.2 },
  });
  await run(owner, 'pickup', { object_id: publicA });
  const publicB = await run(passkey, 'mint', { template_id: template });
  const privateC = await run(owner, 'mint', { template_id: hidden });
  await run(passkey, 'redeem', { object_id: publicB });
  // Seal every batch: the last one by time.
  const settle = async () => {
    for (let i = 0; i < 20 && (await svc.container.batches.sealer.tick()); i++);
  };
  await settle();
  svc.clock.advance(11_000);
  await settle();
  return { live, owner, passkey, idle, publicA, publicB, privateC };
}
