import type { Executor } from '../../db/pool.js';
import { newId } from '../../lib/ids.js';
import { founderGrant } from '../../lib/grants.js';
import type { OrganizationMembers } from '../organizations/index.js';
import type { WalletMemberships } from '../wallets/index.js';
import * as repo from './repo.js';

/**
 * Memberships as the modules below members ask for them, through the interfaces they declare
 * (src/container.ts wires them): wallets (entering an organization at sign-in, binding
 * invitations to a confirmed address) and organizations (the founder, the end of every
 * membership of a deleted organization). members owns the `members` table: only its repo
 * writes it.
 */
export const walletMemberships: WalletMemberships = {
  organizationEntry: (exec, orgId) => repo.findOrganizationEntry(exec, orgId),
  activeRole: (exec, orgId, walletId) => repo.activeRole(exec, orgId, walletId),
  join: (exec, m) => repo.insertActiveMember(exec, m),
  bindInvitations: (exec, walletId, email, now) => repo.bindInvitations(exec, walletId, email, now),
};

export const organizationMembers: OrganizationMembers = {
  async addFounder(exec: Executor, f) {
    await repo.insertMember(exec, {
      id: newId('member'),
      orgId: f.orgId,
      walletId: f.walletId,
      email: f.email,
      name: f.name,
      grant: founderGrant(),
      status: 'active',
      now: f.now,
    });
  },
  countOtherActive: (exec, orgId, walletId) => repo.countOtherActiveMembers(exec, orgId, walletId),
  endAll: (exec, orgId, now) => repo.endMembershipsIn(exec, orgId, now),
};

/**
 * A wallet handed over to its address's owner (auth/hand-over.ts) leaves every organization:
 * the invitations of the organizations it founded are withdrawn, then its memberships end.
 */
export async function endWalletMemberships(
  exec: Executor,
  walletId: string,
  now: Date,
): Promise<void> {
  await repo.withdrawInvitationsIn(exec, await repo.organizationsFoundedBy(exec, walletId), now);
  await repo.endMembershipsOfWallet(exec, walletId, now);
}

/** Whether the wallet is an active member of the organization (support's access requests). */
export function walletIsActiveMember(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<boolean> {
  return repo.walletIsActiveMember(exec, orgId, walletId);
}

/** The wallet's active role in a live organization, or null (a spend policy on a wallet is
 * bounded by it, policies/service.ts). */
export function activeRoleOf(
  exec: Executor,
  orgId: string,
  walletId: string,
): Promise<string | null> {
  return repo.activeRoleOf(exec, orgId, walletId);
}
