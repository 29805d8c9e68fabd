/**
 * What other modules may use of organizations besides their service and routes: the
 * caller's standing in an organization named by a path, and one live organization.
 */
export {
  granterIn,
  isOwner,
  requireOrgPermission,
  resolveOrgAccess,
  type OrgAccess,
} from './access.js';
export { findOrganization, type OrganizationRow } from './repo.js';
