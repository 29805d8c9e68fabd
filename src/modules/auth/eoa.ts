import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { createSiweMessage, parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import type { Db, Executor } from '../../db/pool.js';
import { isAddress } from '../../lib/address.js';
import type { ClientContext } from '../../lib/client.js';
import type { Clock } from '../../lib/clock.js';
import { recoverEip191Address } from '../../lib/crypto/eip191.js';
import { conflict, invalid, unauthenticated } from '../../lib/errors.js';
import type { AuthContext } from '../../lib/permissions.js';
import type { Accounts } from '../wallets/index.js';
import { linkedOrCreated } from './first-sign-in.js';
import { requireRecentSignIn } from './recent-sign-in.js';
import { insertSiweNonce, spendSiweNonce } from './repo/challenges.js';
import type { TokenResponse } from './session-service.js';
import type { SignIn } from './sign-in.js';

export const SIWE_TTL_MS = 5 * 60_000;
/** EIP-4361 needs a chain id; the service runs no chain of its own, so Ethereum's. */
const CHAIN_ID = 1;
const STATEMENT = 'Sign in to the Object Network Service.';
const REFUSED = 'crypto wallet signature refused';

export interface SiweChallenge {
  message: string;
  nonce: string;
  expires_at: string;
}

/**
 * Sign-In with Ethereum (EIP-4361), verified offline: the message must carry our domain,
 * a live nonce we issued for that address, and a signature that recovers to the address.
 */
export class EoaService {
  private readonly domain: string;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly accounts: Accounts,
    private readonly signIn: SignIn,
    private readonly publicUrl: string,
  ) {
    this.domain = new URL(publicUrl).host;
  }

  async challenge(address: string): Promise<SiweChallenge> {
    if (!isAddress(address)) {
      throw invalid('address must be 0x followed by 40 hex characters', [
        { field: 'address', reason: 'is not an address' },
      ]);
    }
    const now = this.clock.now();
    const expires = new Date(now.getTime() + SIWE_TTL_MS);
    const nonce = randomBytes(16).toString('hex');
    const message = createSiweMessage({
      address: getAddress(address.toLowerCase()),
      chainId: CHAIN_ID,
      domain: this.domain,
      uri: this.publicUrl,
      version: '1',
      nonce,
      statement: STATEMENT,
      issuedAt: now,
      expirationTime: expires,
    });
    await insertSiweNonce(
      this.db,
      { nonce, address: address.toLowerCase(), expiresAt: expires },
      now,
    );
    return { message, nonce, expires_at: expires.toISOString() };
  }

  /**
   * The lowercase address that signed a valid message; its nonce is spent here, so the
   * same signed message never signs in twice.
   */
  async verify(exec: Executor, message: string, signature: string): Promise<string> {
    const now = this.clock.now();
    let parsed: ReturnType<typeof parseSiweMessage>;
    try {
      parsed = parseSiweMessage(message);
    } catch {
      throw unauthenticated(REFUSED);
    }
    const { address, nonce } = parsed;
    if (!address || !nonce || !parsed.expirationTime) throw unauthenticated(REFUSED);
    if (!validateSiweMessage({ message: parsed, domain: this.domain, time: now })) {
      throw unauthenticated(REFUSED);
    }
    const signer = recoverEip191Address(message, signature);
    if (!signer.ok || signer.address !== address.toLowerCase()) throw unauthenticated(REFUSED);
    if (!(await spendSiweNonce(exec, nonce, signer.address, now))) throw unauthenticated(REFUSED);
    return signer.address;
  }

  /** `POST /wallets/connect/eoa`: the wallet this EOA is linked to, or a new EOA wallet. */
  async connect(
    input: { message: string; signature: string; organization_id?: string },
    client: ClientContext,
  ): Promise<TokenResponse> {
    const address = await this.verify(this.db, input.message, input.signature);
    return this.db.transaction(async (tx) => {
      const { walletId, credentialId } = await linkedOrCreated(
        tx,
        this.accounts,
        { type: 'eoa', externalId: address },
        async (sp) => {
          // A first sign-in is a sign-up: counted as one, and refused over the limit.
          await client.admitSignUp?.();
          const walletId = (await this.accounts.createWallet(sp, { address })).id;
          return { walletId, credentialId: await this.addCredential(sp, walletId, address) };
        },
      );
      return this.signIn.complete(tx, walletId, input.organization_id, {
        ...client,
        credentialId,
      });
    });
  }

  /** `POST /wallets/me/credentials/eoa`: links an EOA to the signed-in wallet. */
  async link(
    auth: AuthContext,
    input: { message: string; signature: string },
  ): Promise<{ id: string }> {
    await requireRecentSignIn(this.db, this.clock, auth);
    const address = await this.verify(this.db, input.message, input.signature);
    const linked = await this.db.transaction(async (tx) => {
      if (await this.accounts.credentialByExternalId(tx, 'eoa', address)) {
        throw conflict('this crypto wallet is already linked to a wallet');
      }
      return { id: await this.addCredential(tx, auth.walletId, address) };
    });
    await this.accounts.notices.credentialChanged(auth.walletId, 'eoa-linked');
    return linked;
  }

  private addCredential(tx: Executor, walletId: string, address: string): Promise<string> {
    return this.accounts.addCredential(tx, walletId, {
      type: 'eoa',
      label: address,
      externalId: address,
    });
  }
}
