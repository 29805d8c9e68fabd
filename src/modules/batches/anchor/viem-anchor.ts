import {
  BaseError,
  createPublicClient,
  http,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type TransactionSerializable,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AnchorError, type Anchor, type AnchorStatus } from './anchor.js';

export interface ViemAnchorOptions {
  /** The chain's JSON-RPC endpoint (http or https). */
  rpcUrl: string;
  /** The anchoring account's secp256k1 key, 0x + 64 hex. */
  privateKey: `0x${string}`;
  /** Blocks that must be mined on top of the transaction's block before it counts (≥ 0). */
  confirmations: number;
  /** Bound on one `submit` or `status` call, and on each request within it (default 10 s). */
  timeoutMs?: number;
}

const HEX32 = /^0x[0-9a-fA-F]{64}$/;
/**
 * How long the nonce this process expects next outranks a lower count from the node: a
 * load-balanced RPC endpoint may answer from a node that has not yet seen the last send.
 * Past it the node's count rules, so a transaction the network lost cannot leave a gap.
 */
const NONCE_HINT_MS = 60_000;

/**
 * An `Anchor` over viem: each commitment goes out as a plain transaction from the account
 * to itself, value 0, data = the 32 commitment bytes (no contract, so nothing to compile or
 * deploy). The chain id is the node's (`eth_chainId`, read once). Submits run one at a time;
 * the nonce is the node's pending count, or the one after this process's last send when the
 * node lags behind it (for a minute). Fees are EIP-1559 (twice the latest base fee plus the
 * node's suggested tip, so the transaction stays valid through several blocks of rising base
 * fee) or, on a chain without a base fee, the node's gas price. Nothing is retried here: the
 * caller owns the retry schedule.
 *
 * A second submit of the same commitment is harmless: it is a second transaction carrying
 * the same 32 bytes, and either one proves the commitment was published by `sender` no later
 * than its block. That is what happens when the process dies between `submit` answering and
 * the caller recording the hash, or when a send timed out after the node had taken it.
 */
export function createViemAnchor(options: ViemAnchorOptions): Anchor {
  const { rpcUrl, privateKey, confirmations } = options;
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (!HEX32.test(privateKey)) throw new AnchorError('the private key must be 0x + 64 hex digits');
  if (!Number.isInteger(confirmations) || confirmations < 0) {
    throw new AnchorError('confirmations must be a whole number ≥ 0');
  }
  if (!/^https?:\/\//i.test(rpcUrl)) throw new AnchorError('the RPC URL must be http or https');

  const account = accountOf(privateKey);
  const self = account.address;
  const sender = self.toLowerCase();
  const client = createPublicClient({
    transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }),
  });

  let chainId: number | null = null;
  let nonceHint: { next: number; until: number } | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;

  /** A failure, told without the URL (which may carry an API key) and without a cause. */
  const failure = (what: string, err: unknown): AnchorError => {
    if (err instanceof AnchorError) return err;
    let text = err instanceof BaseError ? err.shortMessage : 'unexpected error';
    if (err instanceof BaseError && err.details && err.details !== text) text += ` ${err.details}`;
    const code = codeOf(err);
    if (code) text += ` (${code})`;
    text = text.split(rpcUrl).join('<rpc>').replace(/\s+/g, ' ');
    return new AnchorError(`anchor: ${what} failed: ${text}`);
  };

  /** `run` bounded by `timeoutMs` as a whole; an AnchorError naming `what` on failure. */
  const bounded = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    if (closed) throw new AnchorError('anchor: closed');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AnchorError(`anchor: ${what} took longer than ${timeoutMs} ms`)),
        timeoutMs,
      );
      timer.unref();
    });
    try {
      return await Promise.race([run(), deadline]);
    } catch (err) {
      throw failure(what, err);
    } finally {
      clearTimeout(timer);
    }
  };

  /** Runs submits one after another: two in a row never pick the same nonce. */
  const exclusive = <T>(run: () => Promise<T>): Promise<T> => {
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };

  async function fees(): Promise<
    { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { gasPrice: bigint }
  > {
    const block = await client.getBlock({ blockTag: 'latest' });
    if (block.baseFeePerGas === null) return { gasPrice: await client.getGasPrice() };
    const tip = await client.estimateMaxPriorityFeePerGas();
    return { maxFeePerGas: block.baseFeePerGas * 2n + tip, maxPriorityFeePerGas: tip };
  }

  async function send(commitment: `0x${string}`): Promise<`0x${string}`> {
    chainId ??= await client.getChainId();
    const counted = await client.getTransactionCount({ address: self, blockTag: 'pending' });
    const hint = nonceHint && nonceHint.until > Date.now() ? nonceHint.next : 0;
    const nonce = Math.max(counted, hint);
    try {
      const gas = await client.estimateGas({
        account: self,
        to: self,
        value: 0n,
        data: commitment,
      });
      const price = await fees();
      const tx: TransactionSerializable = {
        chainId,
        nonce,
        to: self,
        value: 0n,
        data: commitment,
        gas,
        ...('gasPrice' in price ? { type: 'legacy', ...price } : { type: 'eip1559', ...price }),
      };
      const serializedTransaction = await account.signTransaction(tx);
      const hash = await client.sendRawTransaction({ serializedTransaction });
      nonceHint = { next: nonce + 1, until: Date.now() + NONCE_HINT_MS };
      return hash;
    } catch (err) {
      nonceHint = null; // the next submit asks the node afresh
      throw err;
    }
  }

  async function status(txHash: `0x${string}`): Promise<AnchorStatus> {
    const receipt = await client.getTransactionReceipt({ hash: txHash }).catch((err: unknown) => {
      if (err instanceof TransactionReceiptNotFoundError) return null;
      throw err;
    });
    if (!receipt) {
      const known = await client.getTransaction({ hash: txHash }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof TransactionNotFoundError) return false;
          throw err;
        },
      );
      if (known) return 'pending';
      nonceHint = null; // the network lost it: its nonce is free again
      return 'dropped';
    }
    if (receipt.status !== 'success') return 'dropped';
    const head = await client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber < BigInt(confirmations)) return 'pending';
    return { blockHash: receipt.blockHash, blockNumber: receipt.blockNumber };
  }

  return {
    sender,
    submit(commitment) {
      if (!HEX32.test(commitment)) {
        return Promise.reject(new AnchorError('anchor: the commitment must be 0x + 64 hex digits'));
      }
      return bounded('sending the commitment', () =>
        exclusive(() => send(commitment.toLowerCase() as `0x${string}`)),
      );
    },
    status(txHash) {
      if (!HEX32.test(txHash)) {
        return Promise.reject(new AnchorError('anchor: not a transaction hash'));
      }
      return bounded('reading the transaction status', () => status(txHash));
    },
    async close() {
      closed = true;
      await queue;
    },
  };
}

function accountOf(privateKey: `0x${string}`) {
  try {
    return privateKeyToAccount(privateKey);
  } catch {
    throw new AnchorError('the private key is not a valid secp256k1 key');
  }
}

/** The first error code (ECONNREFUSED, ETIMEDOUT…) in an error's chain of causes. */
function codeOf(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e && typeof e === 'object'; depth++) {
    const c = e as { code?: unknown; cause?: unknown };
    if (typeof c.code === 'string') return c.code;
    e = c.cause;
  }
  return null;
}
