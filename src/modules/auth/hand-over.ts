import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { revokeKeysCreatedBy } from '../api-keys/index.js';
import { endWalletMemberships } from '../members/index.js';
import type { Accounts, CredentialType } from '../wallets/index.js';
import { retireWalletCodes, type Channel } from './repo/codes.js';
import type { SessionManager } from './sessions.js';

/** What a hand-over ended, for the caches to forget once its transaction committed. */
export interface HandOverReceipt {
  sessionIds: string[];
  apiKeyIds: string[];
}

/** This instance's caches of API keys (the `x-api-key` verifier), told what was revoked. */
export interface ApiKeyCache {
  forget(keyIds: readonly string[]): void;
}

/**
 * The hand-over of a wallet to the owner of its address (docs/auth.md "Proof of address"):
 * a code proved the address for the first time, from someone not signed in, so whoever made
 * the wallet had not proven it and nothing they set up may stay (account pre-hijacking).
 * Inside the proof's transaction, before the invitations accepted for the address bind:
 *
 * - its credentials go but the `keep` types, and every session of the wallet ends;
 * - every API key it created, in any organization, is revoked;
 * - every invitation of the organizations it founded that no wallet holds yet is withdrawn,
 *   so the owner lands in none of them through one;
 * - every membership of the wallet ends, so it is owner of no organization it founded (they
 *   keep their other members, balance and records, detached from the wallet);
 * - it signs in to no organization by default;
 * - it keeps only the address just proven: its other address (email or phone number),
 *   named or even confirmed by whoever made it, goes with its confirmation and its live
 *   codes, so that address never signs in to it again nor proves it over again.
 *
 * `forget` then drops what this instance cached of the sessions and keys at once (other
 * instances when the notices of the ended sessions, keys and memberships arrive:
 * src/revocations.ts).
 */
export class HandOver {
  constructor(
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly sessions: SessionManager,
    private readonly apiKeys: ApiKeyCache,
  ) {}

  async clear(
    tx: Executor,
    walletId: string,
    proven: Channel,
    keep: CredentialType[],
  ): Promise<HandOverReceipt> {
    const now = this.clock.now();
    const dropped = await this.accounts.keepOnlyAddress(tx, walletId, proven);
    await retireWalletCodes(tx, walletId, dropped, now);
    await this.accounts.removeCredentialsExcept(tx, walletId, keep);
    const sessions = await this.sessions.endAllOf(tx, walletId, 'address_proven');
    const apiKeyIds = await revokeKeysCreatedBy(tx, walletId, now);
    await endWalletMemberships(tx, walletId, now);
    await this.accounts.clearDefaultOrganization(tx, walletId);
    return { sessionIds: sessions.map((s) => s.id), apiKeyIds };
  }

  /** After the transaction committed: this instance forgets the ended sessions and keys. */
  forget(receipt: HandOverReceipt): void {
    this.sessions.forget(receipt.sessionIds);
    this.apiKeys.forget(receipt.apiKeyIds);
  }
}
