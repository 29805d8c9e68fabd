/**
 * What other modules may use of the event bus besides its service, wiring, extension point
 * (hooks.ts) and schemas: the organization's action log, page by page, and a transaction
 * batch's actions (the batches feature reads them to seal it).
 */
export {
  actionLogPage,
  batchActionPages,
  batchActions,
  batchLeaves,
  objectHistoryPage,
} from './action-logs.js';
export type { ApplyHooks } from './hooks.js';
export type { BatchJoin } from './repo/group-write.js';
export type { BatchSizeSource } from './fees.js';
export type { ActionLogRecord } from './types.js';
