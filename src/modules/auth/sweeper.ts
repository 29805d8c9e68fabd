import type { Logger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Sweeper } from '../../lib/sweeper.js';
import { deleteOldCodes, deleteOldSpentTokens, deleteStaleFailures } from './repo/sweep.js';
import { FORGET_AFTER_MS } from './throttle.js';

const DAY_MS = 24 * 60 * 60_000;

/**
 * Deletes what sign-in leaves behind once nothing reads it (docs/auth.md, "What is kept"):
 * failure counts past their window, refresh tokens rotated away longer ago than a session can
 * live, and codes a day after they expired. Without it each failed sign-in for a made-up
 * address, each refresh and each code would stay for good.
 */
export class AuthSweeper extends Sweeper {
  constructor(
    db: Executor,
    clock: Clock,
    sessionMaxAgeMs: number,
    logger: Logger,
    everyMs = 60_000,
  ) {
    super(
      'auth-sweeper',
      'old sign-in records',
      async (limit) => {
        const now = clock.now();
        const at = (ms: number) => new Date(now.getTime() - ms);
        const counts = await Promise.all([
          deleteStaleFailures(db, now, at(FORGET_AFTER_MS), limit),
          deleteOldSpentTokens(db, at(sessionMaxAgeMs), limit),
          deleteOldCodes(db, at(DAY_MS), limit),
        ]);
        return Math.max(...counts);
      },
      logger,
      everyMs,
    );
  }
}
