import type { SQL } from 'drizzle-orm';
import * as repo from './repo.js';

// The writes of this module's table(s) inside the event bus's group statement
// (ebus/repo/group-write.ts): the group commits as ONE statement, so each owner hands it the
// data-modifying statement of its own rows, and its repo stays the only writer of them.

/** The minted objects, given their JSON rows. */
export const insertObjects = (rows: SQL): SQL => repo.insertObjects(rows);

/** The changed objects, each guarded by its version when read, given their JSON rows. */
export const updateObjects = (rows: SQL): SQL => repo.updateObjects(rows);
