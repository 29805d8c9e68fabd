import type { Executor } from '../../db/pool.js';
import { AppError, Code, notFound } from '../../lib/errors.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { findWallet } from './repo/lookups.js';
import { walletOfSigner } from './repo/signer-wallet.js';

/**
 * `GET /ebus/nonce` (issue 32 item 8): the wallet an action would be signed for and its next
 * number, with the caller's organization (what an SDK client holding only an API key needs
 * to build an action's text, without `organizations.read`). The wallet is the caller's, the
 * organization member at `address`, or the member that `signer` signs for: an EOA that is the
 * wallet's own address or a crypto wallet linked to it (not removed).
 */
export interface NonceAnswer {
  address: string;
  nonce: number;
  organization_id: string;
}

export async function walletNonce(
  db: Executor,
  auth: AuthContext,
  query: { address?: string | undefined; signer?: string | undefined },
): Promise<NonceAnswer> {
  if (query.signer !== undefined) {
    const orgId = requireOrg(auth);
    const signer = query.signer.toLowerCase();
    const w = await walletOfSigner(db, orgId, signer);
    if (!w || !w.role) {
      throw new AppError(
        Code.NOT_FOUND,
        `no wallet signing with ${signer} in this organization: that crypto wallet is no member's ` +
          "wallet and is linked to none. Link it to the acting wallet (the console's Sessions " +
          'page, "Link a crypto wallet"), or pass the acting wallet\'s address as `wallet`',
      );
    }
    return { address: w.address, nonce: w.next_nonce, organization_id: orgId };
  }
  const w = query.address
    ? await findWallet(db, requireOrg(auth), { address: query.address.toLowerCase() })
    : await findWallet(db, auth.orgId ?? '', { id: auth.walletId });
  if (!w || (query.address && !w.role)) {
    throw query.address
      ? new AppError(
          Code.NOT_FOUND,
          `no member wallet at ${query.address.toLowerCase()} in this organization. To sign ` +
            'with a crypto wallet linked to a wallet, pass it as `signer` (the SDK does so)',
        )
      : notFound('wallet');
  }
  return { address: w.address, nonce: w.next_nonce, organization_id: auth.orgId ?? '' };
}
