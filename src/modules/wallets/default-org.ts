import type { Executor } from '../../db/pool.js';
import * as repo from './repo.js';

/**
 * The organization a wallet acts in by default (`wallets.default_org_id`), as organizations
 * change it: a founder's first organization, a switch, a deletion.
 */
export const defaultOrganizations = {
  /** Makes `orgId` the wallet's default when it has none yet (a standalone account). */
  setIfNone: (exec: Executor, walletId: string, orgId: string): Promise<void> =>
    repo.setDefaultOrgIfNone(exec, walletId, orgId),
  /** Makes `orgId` the wallet's default (an organization switch). */
  set: (exec: Executor, walletId: string, orgId: string, now: Date): Promise<void> =>
    repo.setDefaultOrg(exec, walletId, orgId, now),
  /** No wallet acts in a deleted organization by default any more. */
  clearEverywhere: (exec: Executor, orgId: string, now: Date): Promise<void> =>
    repo.clearDefaultOrgEverywhere(exec, orgId, now),
};
