import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import { startEvmNode, type EvmNode } from '../helpers/evm-node.js';
import { freePort } from '../helpers/processes.js';
import { AnchorError, type Anchor } from '../../src/modules/batches/anchor/anchor.js';
import { createViemAnchor } from '../../src/modules/batches/anchor/viem-anchor.js';

/** The anchoring client against a real local EVM node (Hardhat), started and stopped here. */

interface ChainTx {
  from: string;
  to: string;
  input: string;
  value: string;
  nonce: string;
  chainId: string;
  blockHash: string | null;
}
interface ChainReceipt {
  blockHash: `0x${string}`;
  blockNumber: string;
  status: string;
}

const commitment = () => `0x${randomBytes(32).toString('hex')}` as const;

let node: EvmNode;
let anchor: Anchor;

beforeAll(async () => {
  node = await startEvmNode();
  anchor = createViemAnchor({ rpcUrl: node.rpcUrl, privateKey: node.privateKey, confirmations: 2 });
}, 60_000);
afterAll(async () => {
  await anchor?.close?.();
  await node?.stop();
});

const txOf = (hash: string) => node.rpc<ChainTx | null>('eth_getTransactionByHash', [hash]);
const receiptOf = (hash: string) =>
  node.rpc<ChainReceipt | null>('eth_getTransactionReceipt', [hash]);

/** Runs `fn` with automining off: transactions wait in the node's pool until `mine`. */
async function withoutAutomine(fn: () => Promise<void>) {
  await node.rpc('evm_setAutomine', [false]);
  try {
    await fn();
  } finally {
    await node.rpc('evm_setAutomine', [true]);
  }
}

describe('viem anchor on a local EVM node', () => {
  it('posts the commitment as the data of a transaction from the sender to itself', async () => {
    expect(anchor.sender).toBe(node.address);
    const c = commitment();
    const hash = await anchor.submit(c);
    expect(hash).toMatch(/^0x[0-9a-f]{64}$/);
    const tx = (await txOf(hash))!;
    expect(tx.input).toBe(c);
    expect(tx.from).toBe(anchor.sender);
    expect(tx.to).toBe(anchor.sender);
    expect(BigInt(tx.value)).toBe(0n);
    expect(Number(tx.chainId)).toBe(31337); // read from the node, never configured
    expect((await receiptOf(hash))!.status).toBe('0x1');
  });

  it('is pending until the block is `confirmations` deep, then answers that block', async () => {
    const hash = await anchor.submit(commitment());
    const receipt = (await receiptOf(hash))!; // automining: in a block at once
    expect(await anchor.status(hash)).toBe('pending'); // 0 blocks on top
    await node.mine(1);
    expect(await anchor.status(hash)).toBe('pending'); // 1
    await node.mine(1);
    expect(await anchor.status(hash)).toEqual({
      blockHash: receipt.blockHash,
      blockNumber: BigInt(receipt.blockNumber),
    });
    await node.mine(3);
    expect(await anchor.status(hash)).toEqual({
      blockHash: receipt.blockHash,
      blockNumber: BigInt(receipt.blockNumber),
    });
  });

  it('with 0 confirmations counts a transaction as soon as it is in a block', async () => {
    const now = createViemAnchor({
      rpcUrl: node.rpcUrl,
      privateKey: node.privateKey,
      confirmations: 0,
    });
    await withoutAutomine(async () => {
      const hash = await now.submit(commitment());
      expect(await now.status(hash)).toBe('pending'); // in the pool, not yet mined
      await node.mine(1);
      const receipt = (await receiptOf(hash))!;
      expect(await now.status(hash)).toEqual({
        blockHash: receipt.blockHash,
        blockNumber: BigInt(receipt.blockNumber),
      });
    });
  });

  it('lands two submits in a row, and two at once, on consecutive nonces', async () => {
    const a = await anchor.submit(commitment());
    const b = await anchor.submit(commitment());
    const [c, d] = await Promise.all([anchor.submit(commitment()), anchor.submit(commitment())]);
    const nonces = [];
    for (const hash of [a, b, c, d]) {
      expect((await receiptOf(hash))!.status).toBe('0x1');
      nonces.push(Number((await txOf(hash))!.nonce));
    }
    expect(nonces).toEqual([nonces[0], nonces[0]! + 1, nonces[0]! + 2, nonces[0]! + 3]);
  });

  it('lands two submits in a row while neither is mined yet (nonces from the pending pool)', async () => {
    await withoutAutomine(async () => {
      const a = await anchor.submit(commitment());
      const b = await anchor.submit(commitment());
      expect(await anchor.status(a)).toBe('pending');
      expect(await receiptOf(a)).toBeNull();
      await node.mine(1);
      expect((await receiptOf(a))!.status).toBe('0x1');
      expect((await receiptOf(b))!.status).toBe('0x1');
    });
  });

  it('answers dropped for a transaction the node lost, and the next submit reuses its nonce', async () => {
    await withoutAutomine(async () => {
      const lost = await anchor.submit(commitment());
      const lostNonce = Number((await txOf(lost))!.nonce);
      await node.rpc('hardhat_dropTransaction', [lost]);
      expect(await anchor.status(lost)).toBe('dropped');
      // Were the nonce after the lost one used, this transaction would wait forever.
      const again = await anchor.submit(commitment());
      expect(Number((await txOf(again))!.nonce)).toBe(lostNonce);
      await node.mine(1);
      expect((await receiptOf(again))!.status).toBe('0x1');
    });
  });

  it('answers dropped for a hash the node never saw', async () => {
    expect(await anchor.status(commitment())).toBe('dropped');
  });

  it('answers dropped for a transaction that reverted', async () => {
    // A contract whose code is PUSH1 0 PUSH1 0 REVERT, called by another dev account.
    const reverter = '0x00000000000000000000000000000000000a0c40';
    await node.rpc('hardhat_setCode', [reverter, '0x60006000fd']);
    const [, other] = await node.rpc<string[]>('eth_accounts');
    let hash: `0x${string}` = '0x';
    // (Automining, Hardhat answers a reverting send with an error instead of its hash.)
    await withoutAutomine(async () => {
      hash = await node.rpc('eth_sendTransaction', [{ from: other, to: reverter, gas: '0x10000' }]);
      await node.mine(1);
    });
    expect((await receiptOf(hash))!.status).toBe('0x0');
    await node.mine(3);
    expect(await anchor.status(hash)).toBe('dropped');
  });

  it('refuses an account without funds, naming the cause and not the key', async () => {
    const key = generatePrivateKey();
    const poor = createViemAnchor({ rpcUrl: node.rpcUrl, privateKey: key, confirmations: 2 });
    const err = await poor.submit(commitment()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnchorError);
    expect((err as Error).message).toMatch(/fund|balance/i);
    expect((err as Error).message).not.toContain(key.slice(2));
    expect(err).not.toHaveProperty('cause');
  });

  it('refuses a malformed commitment, hash, key, URL or confirmations before any call', async () => {
    await expect(anchor.submit('0x1234')).rejects.toBeInstanceOf(AnchorError);
    await expect(anchor.submit(`0x${'g'.repeat(64)}`)).rejects.toBeInstanceOf(AnchorError);
    await expect(anchor.status('0xabc')).rejects.toBeInstanceOf(AnchorError);
    const ok = { rpcUrl: node.rpcUrl, privateKey: node.privateKey, confirmations: 1 };
    expect(() => createViemAnchor({ ...ok, privateKey: '0x12' })).toThrow(AnchorError);
    expect(() => createViemAnchor({ ...ok, privateKey: `0x${'0'.repeat(64)}` })).toThrow(
      AnchorError,
    );
    expect(() => createViemAnchor({ ...ok, rpcUrl: 'ws://127.0.0.1:1' })).toThrow(AnchorError);
    expect(() => createViemAnchor({ ...ok, confirmations: -1 })).toThrow(AnchorError);
    expect(() => createViemAnchor({ ...ok, confirmations: 1.5 })).toThrow(AnchorError);
  });

  it('refuses every call once closed', async () => {
    const closing = createViemAnchor({
      rpcUrl: node.rpcUrl,
      privateKey: node.privateKey,
      confirmations: 0,
    });
    await closing.close!();
    await expect(closing.submit(commitment())).rejects.toThrow(/closed/);
  });
});

describe('viem anchor without a working node', () => {
  it('throws AnchorError at once when nothing listens, without the URL in the message', async () => {
    const port = await freePort();
    const rpcUrl = `http://127.0.0.1:${port}/v2/secret-api-key`;
    const down = createViemAnchor({ rpcUrl, privateKey: generatePrivateKey(), confirmations: 2 });
    const started = Date.now();
    const err = await down.submit(commitment()).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(AnchorError);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
    expect((err as Error).message).not.toContain('secret-api-key');
    await expect(down.status(commitment())).rejects.toBeInstanceOf(AnchorError);
  });

  it('gives up after timeoutMs when the node accepts the connection but never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s)); // reads, never writes
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const slow = createViemAnchor({
        rpcUrl: `http://127.0.0.1:${port}`,
        privateKey: generatePrivateKey(),
        confirmations: 2,
        timeoutMs: 400,
      });
      for (const call of [() => slow.submit(commitment()), () => slow.status(commitment())]) {
        const started = Date.now();
        const err = await call().catch((e: unknown) => e);
        const took = Date.now() - started;
        expect(err).toBeInstanceOf(AnchorError);
        expect(took).toBeGreaterThanOrEqual(350);
        expect(took).toBeLessThan(2_000);
      }
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
