/**
 * What other modules may use of API keys besides their service, routes and verifier: what a
 * live key of an organization may do now (an invitation it made is re-checked against it),
 * and revoking every key a wallet created (the hand-over of a wallet to its address's owner,
 * auth/hand-over.ts).
 */
export { listedKeyPermissions, liveKeyPermissions } from './verifier.js';
export { revokeKeysCreatedBy } from './service.js';
