import type { Db, Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { asDate } from '../../db/values.js';
import { failedPrecondition, notFound, unauthenticated } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import type { KeyObject } from 'node:crypto';
import { coseToKeyObject } from '../../lib/crypto/webauthn-assertion.js';
import type { AddressNotices } from './address-notices.js';
import * as repo from './repo.js';
import type { PublicCredential, SignerLinks } from './schema.js';

export interface CredentialView {
  id: string;
  type: repo.CredentialType;
  label: string;
  when_created: string;
}

export interface WalletView {
  id: string;
  address: string;
  name: string | null;
  email: string | null;
  phone_number: string | null;
  email_confirmed: boolean;
  phone_confirmed: boolean;
  organization_id: string | null;
  roles: string[];
  credentials: CredentialView[];
  when_created: string;
}

const credentialView = (c: repo.CredentialRow): CredentialView => ({
  id: c.id,
  type: c.type,
  label: c.label,
  when_created: asDate(c.created_at).toISOString(),
});

/**
 * What removing a credential asks of sign-in: the sessions the credential opened end with it.
 * Declared here and implemented by `auth` (wired in src/container.ts), so wallets know
 * nothing of sessions.
 */
export interface CredentialSessions {
  /**
   * Ends, inside `exec`'s transaction, the live sessions the credential opened but
   * `keepSessionId`; answers their ids for `forget`.
   */
  endOpenedWith(
    exec: Executor,
    walletId: string,
    credentialId: string,
    keepSessionId: string | null,
  ): Promise<string[]>;
  /** Once the transaction committed: this process stops trusting those sessions at once. */
  forget(sessionIds: readonly string[]): void;
  /** Refuses (403 code 7) a caller whose sign-in is not recent (docs/auth.md). */
  requireRecentSignIn(exec: Executor, auth: AuthContext): Promise<void>;
}

/** The signed-in wallet of a person and its credentials. */
export class WalletService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly sessions: CredentialSessions,
    private readonly notices: Pick<AddressNotices, 'credentialChanged'>,
    /** Where the anonymous reads run: the public reads' pool (src/db/pool.ts). */
    private readonly publicDb: Executor = db,
  ) {}

  /** `GET /wallets/me`. */
  async me(auth: AuthContext): Promise<WalletView> {
    const wallet = await repo.findWallet(this.db, { id: auth.walletId });
    if (!wallet) throw unauthenticated('wallet not found');
    const creds = await repo.listCredentials(this.db, wallet.id);
    return {
      id: wallet.id,
      address: wallet.address,
      name: wallet.name,
      email: wallet.email,
      phone_number: wallet.phone_number,
      email_confirmed: wallet.email_confirmed_at !== null,
      phone_confirmed: wallet.phone_confirmed_at !== null,
      organization_id: auth.orgId,
      roles: auth.role ? [auth.role] : [],
      credentials: creds.map(credentialView),
      when_created: asDate(wallet.created_at).toISOString(),
    };
  }

  /** `GET /public/credentials/{credentialId}`: see {@link publicPasskey}. */
  async publicCredential(credentialId: string): Promise<PublicCredential> {
    return publicPasskey(this.publicDb, credentialId);
  }

  /**
   * `GET /public/wallets/{address}/signers/{signer}` (no credential): when the EOA `signer`
   * was linked to the wallet, so anyone can check an action it signed for the wallet. 404
   * unless it was ever linked and the wallet signed at least one action with an EOA
   * (docs/decisions.md).
   */
  async signerLinks(wallet: string, signer: string): Promise<SignerLinks> {
    const w = wallet.toLowerCase();
    const s = signer.toLowerCase();
    const rows = await repo.findSignerLinks(this.publicDb, w, s);
    if (rows.length === 0) throw notFound('signer of this wallet');
    return {
      wallet: w,
      signer: s,
      links: rows.map((r) => ({
        when_linked: asDate(r.created_at).toISOString(),
        when_unlinked: r.removed_at === null ? '' : asDate(r.removed_at).toISOString(),
      })),
    };
  }

  async credentials(auth: AuthContext): Promise<CredentialView[]> {
    return (await repo.listCredentials(this.db, auth.walletId)).map(credentialView);
  }

  /**
   * Removes one credential, for a caller signed in recently (403 code 7 otherwise: a stolen
   * token must not remove the owner's credentials). Refused (400 code 9) for the last one the
   * wallet can sign in with, and for the EOA that is the wallet's own address (the address never changes).
   * The sessions it opened end, but the caller's own. From the commit on it signs no action
   * on any process: the event bus checks the credential where it applies each action.
   */
  async removeCredential(auth: AuthContext, credentialId: string): Promise<void> {
    const ended = await this.db.transaction(async (tx) => {
      await this.sessions.requireRecentSignIn(tx, auth);
      // Locking the wallet row serialises two removals that would each leave one.
      const wallet = await repo.findWallet(tx, { id: auth.walletId }, true);
      if (!wallet) throw unauthenticated('wallet not found');
      const creds = await repo.listCredentials(tx, wallet.id);
      const target = creds.find((c) => c.id === credentialId);
      if (!target) throw notFound('credential');
      if (creds.length <= 1) {
        throw failedPrecondition('cannot remove the last credential this wallet signs in with');
      }
      if (target.type === 'eoa' && target.external_id === wallet.address) {
        throw failedPrecondition("cannot remove the crypto wallet that is this wallet's address");
      }
      const now = this.clock.now();
      await repo.removeCredential(tx, wallet.id, target.id, now);
      if (target.type === 'password') await repo.setPasswordHash(tx, wallet.id, null, now);
      return this.sessions.endOpenedWith(tx, wallet.id, target.id, auth.sessionId);
    });
    this.sessions.forget(ended);
    await this.notices.credentialChanged(auth.walletId, 'credential-removed');
  }
}

/** The COSE algorithm a passkey's key verifies with, from the key's type. */
function algorithmOf(key: KeyObject): { cose: -7 | -8 | -257; name: 'ES256' | 'EdDSA' | 'RS256' } {
  if (key.asymmetricKeyType === 'ec') return { cose: -7, name: 'ES256' };
  if (key.asymmetricKeyType === 'ed25519') return { cose: -8, name: 'EdDSA' };
  return { cose: -257, name: 'RS256' };
}

/**
 * `GET /public/credentials/{credentialId}` (no credential): the public key of a passkey that
 * signed at least one action, so anyone can check the signatures the action log publishes.
 * A passkey that never signed an action answers 404 like an unknown one (docs/decisions.md).
 */
async function publicPasskey(db: Executor, credentialId: string): Promise<PublicCredential> {
  const row = await repo.findSigningPasskey(db, credentialId);
  if (row === null) throw notFound('credential');
  const key = coseToKeyObject(new Uint8Array(row.public_key));
  const spki = key.export({ format: 'der', type: 'spki' });
  return {
    credential_id: row.external_id,
    wallet: row.address,
    algorithm: algorithmOf(key),
    public_key: spki.toString('base64url'),
    when_created: asDate(row.created_at).toISOString(),
    when_removed: row.removed_at === null ? '' : asDate(row.removed_at).toISOString(),
  };
}
