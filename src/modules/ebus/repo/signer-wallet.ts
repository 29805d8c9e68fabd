import { sql } from 'drizzle-orm';
import type { Executor } from '../../../db/pool.js';
import { asNumber } from '../../../db/values.js';
import type { WalletNonceRow } from './lookups.js';

/** The wallet whose own address, or whose linked (not removed) EOA, is `signer`. */
export async function walletOfSigner(
  exec: Executor,
  orgId: string,
  signer: string,
): Promise<WalletNonceRow | null> {
  const { rows } = await exec.execute<WalletNonceRow>(sql`
    SELECT w.id, w.address, w.next_nonce,
      (SELECT m.role FROM members m WHERE m.organization_id = ${orgId}
         AND m.wallet_id = w.id AND m.status = 'active') AS role
    FROM wallets w
    WHERE w.address = ${signer}
      OR w.id IN (SELECT c.wallet_id FROM credentials c
        WHERE c.type = 'eoa' AND c.external_id = ${signer} AND c.removed_at IS NULL)
    ORDER BY (w.address = ${signer}) DESC
    LIMIT 1`);
  const r = rows[0];
  return r ? { ...r, next_nonce: asNumber(r.next_nonce) } : null;
}
