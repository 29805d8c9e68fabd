/**
 * What other modules may use of memberships besides their service and routes: whether a
 * wallet is an active member of an organization (support); what the modules below members ask
 * through the interfaces they declare (`walletMemberships` for wallets, `organizationMembers`
 * for organizations, wired in src/container.ts); for the hand-over of a wallet to the
 * owner of its address (auth/hand-over.ts), the end of its memberships; and a wallet's active
 * role (a spend policy on a wallet is bounded by it, policies/service.ts).
 */
export {
  activeRoleOf,
  endWalletMemberships,
  organizationMembers,
  walletIsActiveMember,
  walletMemberships,
} from './memberships.js';
