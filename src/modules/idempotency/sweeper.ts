import type { Logger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Sweeper } from '../../lib/sweeper.js';
import { deleteExpired } from './repo.js';

/** Deletes expired idempotency keys every `everyMs` (src/lib/sweeper.ts). */
export class IdempotencySweeper extends Sweeper {
  constructor(db: Executor, clock: Clock, logger: Logger, everyMs = 60_000) {
    super(
      'idempotency-sweeper',
      'expired idempotency keys',
      (limit) => deleteExpired(db, clock.now(), limit),
      logger,
      everyMs,
    );
  }
}
