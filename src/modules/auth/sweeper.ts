import type { Logger } from 'pino';
import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { Sweeper } from '../../lib/sweeper.js';
import {
  deleteOldCodes,
  deleteOldSessions,
  deleteOldSpentTokens,
  deleteStaleFailures,
} from './repo/sweep.js';
import { FORGET_AFTER_MS } from './throttle.js';

const DAY_MS = 24 * 60 * 60_000;

/**
 * How long a session is kept after it ended (signed out, revoked, expired): long enough to
 * look into a recent sign-in, and for a reused refresh token of it to be recognised
 * (docs/auth.md, "What is kept").
 */
export const SESSION_RETENTION_MS = 30 * DAY_MS;

/**
 * Deletes what sign-in leaves behind once nothing reads it (docs/auth.md, "What is kept"):
 * failure counts past their window, refresh tokens rotated away longer ago than a session can
 * live, codes a day after they expired, and sessions SESSION_RETENTION_MS after they ended.
 * Without it each failed sign-in for a made-up address, each refresh, each code and each
 * sign-in would stay for good.
 */
export class AuthSweeper extends Sweeper {
  constructor(
    db: Executor,
    clock: Clock,
    sessions: { maxAgeMs: number; idleTimeoutMs: number },
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
          deleteOldSpentTokens(db, at(sessions.maxAgeMs), limit),
          deleteOldCodes(db, at(DAY_MS), limit),
          // A session nothing ended is over once unused for its idle timeout, or for its
          // maximum age (its sign-in was longer ago still): the shorter of the two.
          deleteOldSessions(
            db,
            at(SESSION_RETENTION_MS),
            at(SESSION_RETENTION_MS + Math.min(sessions.idleTimeoutMs, sessions.maxAgeMs)),
            limit,
          ),
        ]);
        return Math.max(...counts);
      },
      logger,
      everyMs,
    );
  }
}
