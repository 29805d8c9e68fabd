/**
 * What other modules may use of memberships besides their service and routes: whether a
 * wallet is an active member of an organization, and adding a membership (an
 * organization's first owner, inside the transaction that creates it).
 */
export { insertMember, walletIsActiveMember, type NewMember } from './repo.js';
