/**
 * What other modules may use of memberships besides their service and routes: whether a
 * wallet is an active member of an organization, and adding a membership (an
 * organization's first owner, inside the transaction that creates it); and, for the hand-over
 * of a wallet to the owner of its address (auth/hand-over.ts), the organizations a wallet
 * founded, ending its memberships and withdrawing the invitations of organizations.
 */
export {
  endMembershipsOfWallet,
  insertMember,
  organizationsFoundedBy,
  walletIsActiveMember,
  withdrawInvitationsIn,
  type NewMember,
} from './repo.js';
