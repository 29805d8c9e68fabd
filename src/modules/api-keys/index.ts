/**
 * What other modules may use of API keys besides their service and routes: revoking every key
 * a wallet created (the hand-over of a wallet to its address's owner, auth/hand-over.ts).
 */
export { revokeKeysCreatedBy } from './repo.js';
