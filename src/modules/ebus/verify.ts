import type { Executor } from '../../db/pool.js';
import { NOT_RECOVERED, recoverAddress, recoveryInput } from '../../lib/crypto/eip191.js';
import type { RecoverPool } from '../../lib/crypto/recover-pool.js';
import { getCachedKey, verifyWebauthnAssertion } from '../../lib/crypto/webauthn-assertion.js';
import type { AppError } from '../../lib/errors.js';
import { forbidden, unauthenticated } from '../../lib/errors.js';
import { isRole, type Role } from '../../lib/permissions.js';
import { CACHE_SPREAD, TtlCache } from '../../lib/ttl-cache.js';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { webauthnChallenge } from './action-text.js';
import { findSigner, type SignerRow } from './repo/lookups.js';
import type { SignatureBody } from './schema.js';
import type { SigningCredential } from './types.js';

export interface Signer {
  walletId: string;
  walletAddress: string;
  role: Role;
  passkey: { credentialId: string; newSignCount: number } | null;
  credential: SigningCredential | null;
}

export type VerifyResult = { ok: true; signer: Signer } | { ok: false; error: AppError };

export interface VerifyInput {
  orgId: string;
  /** The wallet named in the action (and the text). */
  wallet: string;
  text: string;
  signature: SignatureBody;
}

/**
 * How long an EOA signer lookup (wallet, credential, membership) is trusted. A removed
 * credential cannot outlive it: the group statement checks every signing credential again
 * where the action is applied (repo/group-write.ts). A membership change empties it
 * (`forgetAll`) at once on the instance that made it and, through the revocation notices
 * (src/revocations.ts), on every other; this lifetime bounds it only while those are not heard
 * (docs/decisions.md). Passkeys are always read fresh (their sign count moves).
 */
const SIGNER_CACHE_MS = 4_000;

const fail = (error: AppError): VerifyResult => ({ ok: false, error });

/**
 * Signature checks (docs/ebus.md, "Signature bodies"), outside any transaction. 401 code 16: the
 * signature is malformed or invalid, or comes from no credential the service knows (a tampered text
 * recovers a random address). 403 code 7: a valid signature from a credential of ANOTHER
 * wallet, or a signer wallet that is not an active member of the caller's organization.
 */
export class SignatureVerifier {
  private readonly eoaCache = new TtlCache<string, SignerRow>(
    SIGNER_CACHE_MS,
    50_000,
    CACHE_SPREAD,
  );
  /** Moves at each `forgetAll`: a lookup that began before it is not remembered. */
  private generation = 0;

  constructor(
    private readonly db: Executor,
    private readonly webauthn: { rpId: string; origins: readonly string[] },
    /** Recovers EOA signers on a thread of their own; null recovers inline. */
    private readonly recoverer: RecoverPool | null = null,
  ) {}

  async verify(input: VerifyInput): Promise<VerifyResult> {
    const wallet = input.wallet.toLowerCase();
    if (input.signature.type === 'eoa') {
      const prepared = recoveryInput(input.text, input.signature.signature);
      if (!prepared.ok) return fail(unauthenticated(`invalid signature: ${prepared.reason}`));
      const recovered = this.recoverer
        ? await this.recoverer.recover(prepared.input)
        : recoverAddress(prepared.input);
      if (recovered === null) return fail(unauthenticated(`invalid signature: ${NOT_RECOVERED}`));
      const row = await this.eoaSigner(input.orgId, wallet, recovered);
      if (!row.wallet_id) return fail(unauthenticated(`unknown wallet ${wallet}`));
      const own = recovered === wallet || row.cred_wallet_id === row.wallet_id;
      if (!own) {
        return fail(
          row.cred_wallet_id
            ? forbidden('the signature comes from a credential of another wallet')
            : unauthenticated('the signature does not come from a credential of this wallet'),
        );
      }
      // The wallet's own address is never removed; a linked EOA may be.
      const credential =
        recovered === wallet ? null : { type: 'eoa' as const, externalId: recovered };
      return this.member(row, null, credential);
    }

    const credential = input.signature.credential as unknown as AuthenticationResponseJSON;
    const row = await findSigner(this.db, input.orgId, wallet, 'passkey', credential.id);
    if (!row.wallet_id) return fail(unauthenticated(`unknown wallet ${wallet}`));
    if (!row.cred_id || !row.public_key)
      return fail(unauthenticated('the signature comes from an unknown or removed passkey'));
    if (row.cred_wallet_id !== row.wallet_id) {
      return fail(forbidden('the passkey belongs to another wallet'));
    }
    let key;
    try {
      // A copy: pg hands out Buffers that are views into a larger pool.
      key = getCachedKey(row.cred_id, new Uint8Array(row.public_key));
    } catch {
      return fail(unauthenticated('the stored passkey cannot verify signatures'));
    }
    const res = verifyWebauthnAssertion({
      credential,
      expectedChallenge: webauthnChallenge(input.text),
      expectedOrigins: this.webauthn.origins,
      expectedRpId: this.webauthn.rpId,
      publicKey: key,
      signCount: row.sign_count ?? 0,
    });
    if (!res.ok) return fail(unauthenticated(`invalid passkey signature: ${res.reason}`));
    return this.member(
      row,
      { credentialId: row.cred_id, newSignCount: res.newSignCount },
      { type: 'passkey', externalId: credential.id },
    );
  }

  private member(
    row: SignerRow,
    passkey: Signer['passkey'],
    credential: SigningCredential | null,
  ): VerifyResult {
    if (!row.role || !isRole(row.role)) {
      return fail(forbidden(`wallet ${row.address} is not an active member of this organization`));
    }
    return {
      ok: true,
      signer: {
        walletId: row.wallet_id!,
        walletAddress: row.address!,
        role: row.role,
        passkey,
        credential,
      },
    };
  }

  private async eoaSigner(orgId: string, wallet: string, recovered: string): Promise<SignerRow> {
    const key = `${orgId} ${wallet} ${recovered}`;
    const hit = this.eoaCache.get(key);
    if (hit) return hit;
    const generation = this.generation;
    const row = await findSigner(this.db, orgId, wallet, 'eoa', recovered);
    // Only complete answers are cached, so a wallet just linked or joined works at once.
    if (row.wallet_id && row.role && generation === this.generation) this.eoaCache.set(key, row);
    return row;
  }

  /** Forgets every EOA signer lookup (a membership or role changed, here or elsewhere). */
  forgetAll(): void {
    this.generation++;
    this.eoaCache.clear();
  }
}
