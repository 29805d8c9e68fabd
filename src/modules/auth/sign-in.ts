import type { Executor } from '../../db/pool.js';
import type { ClientContext } from '../../lib/client.js';
import type { RoleGrant } from '../../lib/grants.js';
import type { Accounts } from '../wallets/index.js';
import type { SessionService, TokenResponse } from './session-service.js';

/** How every sign-up and sign-in ends: the organization context chosen, a session opened. */
export class SignIn {
  constructor(
    private readonly accounts: Accounts,
    private readonly sessions: SessionService,
  ) {}

  /**
   * Chooses the context (`Accounts.enterOrganization`; `admitted`: a caller's grant that
   * passed its ceiling, src/lib/grants.ts) and opens a session: the token response of docs/auth.md.
   */
  async complete(
    tx: Executor,
    walletId: string,
    orgId: string | undefined,
    client: ClientContext,
    admitted: RoleGrant | null = null,
  ): Promise<TokenResponse> {
    const context = await this.accounts.enterOrganization(tx, walletId, orgId, admitted);
    return this.sessions.issue(tx, { walletId, orgId: context, ...client });
  }
}
