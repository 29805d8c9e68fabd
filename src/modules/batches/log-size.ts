import type { Executor } from '../../db/pool.js';
import * as sealed from './repo/sealed.js';

/**
 * Records on a batch the transparency log's size once its actions are in it (the log's
 * checkpoint, log/service.ts, in the same transaction). batches owns the `batches` table.
 */
export function setLogTreeSize(exec: Executor, batchId: string, size: number): Promise<void> {
  return sealed.setLogTreeSize(exec, batchId, size);
}
