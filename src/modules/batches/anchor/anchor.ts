/**
 * Posting a sealed batch's commitment to an EVM chain (issue 16, item 5; docs/anchoring.md).
 * The sealer owns the batch rows, their statuses and the retry schedule; an `Anchor` only
 * talks to the chain. `createViemAnchor` (viem-anchor.ts) is the one implementation.
 */

/** Where an anchoring transaction stands (see `Anchor.status`). */
export type AnchorStatus =
  'pending' | 'dropped' | { blockHash: `0x${string}`; blockNumber: bigint };

export interface Anchor {
  /** The anchoring account's address, lowercase 0x (the batch's `sender`). */
  readonly sender: string;
  /** Sends a transaction carrying the 32-byte commitment; answers its hash. Throws on failure. */
  submit(commitment: `0x${string}`): Promise<`0x${string}`>;
  /**
   * Where the transaction stands: 'pending' (not mined or fewer than `confirmations`
   * blocks deep), {blockHash} once it is `confirmations` deep, or 'dropped' when the node
   * no longer knows it / it reverted (the caller then submits again). Throws on RPC failure.
   */
  status(
    txHash: `0x${string}`,
  ): Promise<'pending' | 'dropped' | { blockHash: `0x${string}`; blockNumber: bigint }>;
  close?(): Promise<void>;
}

/**
 * Any failure of an anchor call: the node is unreachable or too slow, refused the
 * transaction, or the input is malformed. Its message never carries the private key nor
 * the RPC URL (which may hold a provider's API key), and it has no `cause` that could.
 */
export class AnchorError extends Error {
  override name = 'AnchorError';
}
