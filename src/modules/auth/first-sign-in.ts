import type { Executor } from '../../db/pool.js';
import { AppError, Code } from '../../lib/errors.js';
import type { Accounts, CredentialType } from '../wallets/index.js';

/** An open transaction, which can open a savepoint (drizzle's nested `transaction`). */
interface Transaction extends Executor {
  transaction<T>(run: (savepoint: Executor) => Promise<T>): Promise<T>;
}

/** The wallet a sign-in lands on and the credential it signed in with. */
export interface SignInWallet {
  walletId: string;
  credentialId: string;
}

/**
 * The wallet a sign-in with an outside identity (a Google account, a crypto wallet) lands
 * on: the one its credential is linked to, else the one `create` makes (or finds) and links
 * the credential to (docs/auth.md, "First sign-ins at once").
 *
 * Two first sign-ins of one identity at once both find nothing linked, and both create. The
 * unique indexes (`wallets_email_held`, `wallets_address_key`, `credentials_external`) make
 * the second's insert wait for the first's transaction and fail once it commits, which
 * `Accounts` answers 409 code 6. `create` runs in a savepoint, so the request that lost
 * rolls back everything it added and looks again: it finds the credential the first linked
 * and goes on as a sign-in of that wallet, as if it had come a moment later. A conflict that
 * leaves the credential unlinked (another way in proved the email meanwhile) is refused as
 * before.
 */
export async function linkedOrCreated(
  tx: Transaction,
  accounts: Accounts,
  credential: { type: CredentialType; externalId: string },
  create: (savepoint: Executor) => Promise<SignInWallet>,
): Promise<SignInWallet> {
  const linked = async (): Promise<SignInWallet | null> => {
    const c = await accounts.credentialByExternalId(tx, credential.type, credential.externalId);
    return c ? { walletId: c.wallet_id, credentialId: c.id } : null;
  };
  const found = await linked();
  if (found) return found;
  try {
    return await tx.transaction(create);
  } catch (err) {
    if (!(err instanceof AppError && err.code === Code.ALREADY_EXISTS)) throw err;
    // READ COMMITTED: this statement sees what the winner committed.
    const won = await linked();
    if (!won) throw err;
    return won;
  }
}
