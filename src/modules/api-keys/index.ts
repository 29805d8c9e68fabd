/**
 * What other modules may use of API keys besides their service, routes and verifier: what a
 * live key of an organization may do now (an invitation it made is re-checked against it),
 * revoking every key a wallet created (the hand-over of a wallet to its address's owner,
 * auth/hand-over.ts), and those it created in one organization (its member removed there,
 * members/service.ts).
 */
export { listedKeyPermissions, liveKeyPermissions } from './verifier.js';
export { revokeKeysCreatedBy, revokeKeysCreatedIn } from './service.js';
