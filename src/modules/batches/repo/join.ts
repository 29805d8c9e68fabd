import { sql } from 'drizzle-orm';
import type { BatchJoin } from '../../ebus/index.js';

/** The advisory lock every group holds shared from its join to its commit (migration 0018). */
export const JOIN_LOCK = 7_411_016_001;
/** The sealer's lock: one sealing step at a time across every process. */
export const SEALER_LOCK = 7_411_016_002;

/**
 * The group statement's join: the building batch and the end of its numbers, and the batch
 * named to follow it and the end of its numbers (migrations 0018 and 0019).
 */
export const batchJoin: BatchJoin = sql`SELECT id, seq_end, next_id, next_end FROM ons_batch_join()`;
