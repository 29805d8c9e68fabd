/**
 * What other modules may use of API keys besides their service, routes and verifier: what a
 * live key of an organization may do now (an invitation it made is re-checked against it).
 */
export { liveKeyPermissions } from './verifier.js';
