/**
 * What other modules may use of organizations besides their service and routes: the
 * caller's standing in an organization named by a path, one live organization, and the
 * interfaces organizations declare for the modules above them (members implements
 * `OrganizationMembers`, auth's sessions `OrganizationSessions`; src/container.ts wires them).
 */
export {
  granterIn,
  isOwner,
  requireOrgPermission,
  resolveOrgAccess,
  type OrgAccess,
} from './access.js';
export {
  addToBalance,
  bumpPolicyVersion,
  claimLowBalances,
  findOrganization,
  markTemplateSwitch,
  setLowBalance,
  type LowBalanceNotice,
  type OrganizationMembers,
  type OrganizationRow,
  type OrganizationSessions,
} from './service.js';
export { debitFees } from './group-writes.js';
export { Empty, IdResponse, OrganizationPath, RoleName } from './schema.js';
