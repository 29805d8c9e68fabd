/**
 * What other modules may use of the event bus besides its service, wiring, extension point
 * (hooks.ts) and schemas: the organization's action log, page by page.
 */
export { actionLogPage } from './action-logs.js';
