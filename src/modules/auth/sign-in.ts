import type { Executor } from '../../db/pool.js';
import type { ClientContext } from '../../lib/client.js';
import type { Accounts } from '../wallets/index.js';
import type { SessionService, TokenResponse } from './session-service.js';

/** How every sign-up and sign-in ends: the organization context chosen, a session opened. */
export class SignIn {
  constructor(
    private readonly accounts: Accounts,
    private readonly sessions: SessionService,
  ) {}

  /**
   * Chooses the context (`Accounts.enterOrganization`; `admitted` says the caller may add the
   * wallet) and opens a session: the token response of design.md §4.
   */
  async complete(
    tx: Executor,
    walletId: string,
    orgId: string | undefined,
    client: ClientContext,
    admitted = false,
  ): Promise<TokenResponse> {
    const context = await this.accounts.enterOrganization(tx, walletId, orgId, admitted);
    return this.sessions.issue(tx, { walletId, orgId: context, ...client });
  }
}
