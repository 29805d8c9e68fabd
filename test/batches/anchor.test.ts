import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEvmNode, type EvmNode } from '../helpers/evm-node.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { createSigner, createTemplate, fund, signEoa, type EoaSigner } from '../helpers/ebus.js';

/**
 * Issue 16 item 5: with ANCHOR_* set, each proven batch's commitment is posted to a real local
 * EVM chain (Hardhat's node, started here) and the batch finalizes only once that transaction
 * is final; a chain that fails is retried with backoff, never holds up execute, and fails the
 * batch for good after its attempts.
 */
let node: EvmNode;
let svc: TestService;
let owner: EoaSigner;
let templateId: string;
let nonce = 0;

const get = (url: string) => svc.app.inject({ method: 'GET', url });

async function mint(n: number) {
  for (let i = 0; i < n; i++) {
    const body = await signEoa(svc, owner, {
      name: 'mint',
      params: { template_id: templateId },
      nonce: nonce++,
    });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/ebus/execute',
      headers: owner.headers,
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

beforeAll(async () => {
  node = await startEvmNode();
  svc = await startTestService({
    env: {
      ANCHOR_RPC_URL: node.rpcUrl,
      ANCHOR_PRIVATE_KEY: node.privateKey,
      ANCHOR_CONFIRMATIONS: '2',
      BATCH_MAX_ACTIONS: '3',
      BATCH_CHALLENGE_WINDOW_SECONDS: '0',
    },
  });
  owner = await createSigner(svc);
  await fund(svc, owner.orgId, 10n ** 21n);
  templateId = await createTemplate(svc, owner.orgId);
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  await node?.stop();
});

const sealer = () => svc.container.batches.sealer;

describe('anchoring on a local EVM chain', () => {
  it('posts the commitment, waits for confirmations, then finalizes', async () => {
    await sealer().openOrSeal();
    await mint(3);
    await sealer().openOrSeal();
    expect(await sealer().proveSealed()).toBe(1);
    const proven = (await get('/batches?status=proven')).json().batches[0];
    // Window 0, but the anchor is not final yet: still proven.
    await sealer().tick();
    const posted = (await get(`/batches/${proven.id as string}`)).json();
    expect(posted.status).toBe('proven');
    expect(posted.sender).toBe(node.address);
    expect(posted.l2_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(posted.l2_finalization_tx_hash).toBe('');
    const tx = await node.rpc<{ input: string; from: string; to: string }>(
      'eth_getTransactionByHash',
      [posted.l2_tx_hash],
    );
    expect(tx.input).toBe(posted.commitment);
    expect(tx.from.toLowerCase()).toBe(node.address);
    expect(tx.to.toLowerCase()).toBe(node.address);

    // Mined (automine) but not 2 deep: still waiting.
    svc.clock.advance(3_000);
    await sealer().tick();
    expect((await get(`/batches/${proven.id as string}`)).json().status).toBe('proven');
    await node.mine(2);
    svc.clock.advance(3_000);
    await sealer().tick();
    const final = (await get(`/batches/${proven.id as string}`)).json();
    const receipt = await node.rpc<{ blockHash: string }>('eth_getTransactionReceipt', [
      posted.l2_tx_hash,
    ]);
    expect(final.l2_finalization_tx_hash).toBe(receipt.blockHash);
    expect(final.status).toBe('finalized');
    expect(final.when_completed).not.toBe('');
  }, 60_000);

  it('retries a failing chain with backoff without holding up execute, then fails the batch', async () => {
    await node.stop();
    await mint(3);
    await sealer().openOrSeal();
    await sealer().proveSealed();
    const b = (await get('/batches?status=proven')).json().batches[0];
    await sealer().anchorProven();
    const first = (await get(`/batches/${b.id as string}`)).json();
    expect(first.status).toBe('proven');
    expect(first.error).toMatch(/^anchoring failed/);
    expect(first.error).not.toContain(node.rpcUrl);
    // Execute is not held up by the chain.
    await mint(1);
    // Not retried before its backoff: nothing is due, so no step is taken.
    expect(await sealer().anchorProven()).toBe(0);
    for (let i = 0; i < 12; i++) {
      svc.clock.advance(6 * 60_000);
      await sealer().anchorProven();
    }
    const failed = (await get(`/batches/${b.id as string}`)).json();
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^anchoring failed/);
  }, 120_000);
});
