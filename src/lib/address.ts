import { createHash } from 'node:crypto';

/**
 * The stable address of a wallet that is not an EOA (docs/auth.md, "The signed-in wallet"): derived
 * from the wallet id, so it never changes when credentials do. Same 0x + 40 hex form as an EOA.
 */
export function addressForWalletId(walletId: string): string {
  return '0x' + createHash('sha256').update(`ons-wallet:${walletId}`).digest('hex').slice(0, 40);
}

export function isAddress(value: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(value);
}
