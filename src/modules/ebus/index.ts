/**
 * What other modules may use of the event bus besides its service, wiring, extension point
 * (hooks.ts) and schemas: the organization's action log, page by page, and a transaction
 * batch's actions (the batches feature reads them to seal it).
 */
export {
  actionLogPage,
  adoptWaitingActions,
  batchActionPages,
  batchActions,
  batchLeaves,
  moveActionsToBatch,
  objectHistoryPage,
} from './action-logs.js';
export type { ApplyHooks, HookStatement } from './hooks.js';
export type { BatchJoin } from './hooks.js';
export type { BatchSizeSource } from './fees.js';
export type { ActionLogRecord, AppliedAction } from './types.js';
export { ActionLogSchema, ActionNameSchema } from './schema.js';
