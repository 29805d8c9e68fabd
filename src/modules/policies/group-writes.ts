import type { SQL } from 'drizzle-orm';
import * as repo from './repo.js';
import type { PolicyUse } from './gate.js';

// The writes of this module's table(s) inside the event bus's group statement
// (ebus/repo/group-write.ts): the group commits as ONE statement, so each owner hands it the
// data-modifying statement of its own rows, and its repo stays the only writer of them.

/** The use the group adds to its policies' windows, re-checking their caps (reads `debit`). */
export const policyUseCte = (uses: readonly PolicyUse[], debit: SQL): SQL =>
  repo.policyUseCte(uses, debit);
