import type { SQL } from 'drizzle-orm';
import * as repo from './repo.js';

// The writes of this module's table(s) inside the event bus's group statement
// (ebus/repo/group-write.ts): the group commits as ONE statement, so each owner hands it the
// data-modifying statement of its own rows, and its repo stays the only writer of them.

/** The signer wallets' nonces, each guarded by the nonce read. */
export const advanceNonces = (rows: SQL): SQL => repo.advanceNonces(rows);

/** The signing passkeys' sign counts (never lowered). */
export const raiseSignCounts = (rows: SQL): SQL => repo.raiseSignCounts(rows);
