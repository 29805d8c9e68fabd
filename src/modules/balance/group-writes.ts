import type { SQL } from 'drizzle-orm';
import * as repo from './repo.js';

// The writes of this module's table(s) inside the event bus's group statement
// (ebus/repo/group-write.ts): the group commits as ONE statement, so each owner hands it the
// data-modifying statement of its own rows, and its repo stays the only writer of them.

/** The ledger rows of the action fees (reads the statement's `debit`). */
export const insertFeeLedgerRows = (rows: SQL, now: Date): SQL =>
  repo.insertFeeLedgerRows(rows, now);
