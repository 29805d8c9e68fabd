/**
 * The chain watcher: the future, automatic way deposits enter (today an operator runs
 * `npm run ons -- deposits credit …`). NOT IMPLEMENTED — this file fixes the contract so
 * an implementation can be added without touching the ledger or the routes.
 *
 * An implementation follows the deposit token's transfers to the service's deposit
 * address(es) on the chain, waits for `confirmations` blocks, maps each transfer to an
 * organization (e.g. one deposit address per organization, or a memo), and calls
 * `DepositService.credit()` for each. Crediting is idempotent on the transaction hash, so
 * replaying blocks after a restart or a reorg-safe rescan never credits twice; the
 * watcher only has to persist its `fromBlock` cursor after the credits commit.
 */
export interface ObservedTransfer {
  /** The transaction hash (0x + 64 hex), the idempotency key of the credit. */
  txHash: string;
  blockNumber: bigint;
  token: 'ONS';
  /** The token contract; null for the chain's native coin. */
  tokenAddress: string | null;
  /** The organization the transfer pays, as resolved from its deposit address. */
  organizationId: string;
  amountWei: bigint;
}

export interface ChainWatcher {
  /** Starts following the chain from `fromBlock`; transfers go to `onTransfer`. */
  start(options: {
    fromBlock: bigint;
    confirmations: number;
    onTransfer(transfer: ObservedTransfer): Promise<void>;
  }): void;
  /** Stops after the transfer in hand has been handed over. */
  stop(): Promise<void>;
}
