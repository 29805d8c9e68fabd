import type { BatchJoin, HookStatement } from './repo/group-write.js';
import type { AppliedAction } from './types.js';

/**
 * Extension points inside the apply transaction (issue 7, acceptance 9). A group of actions
 * is written by one statement (repo/group-write.ts); each hook is called once per group with the
 * actions that passed their checks and answers the data-modifying statements (`INSERT …`,
 * `UPDATE …`) to run as part of it, so whatever it writes commits or rolls back with the fees,
 * object changes, log rows and nonces:
 * - the batches feature adds the actions to the current transaction batch (one call),
 * - the webhooks feature queues the matching deliveries in its outbox (one call).
 * Each statement must end with a RETURNING clause (the group statement counts its rows, which
 * makes it run before the balance rows are locked) and must not depend on the others'
 * effects (they run as sibling CTEs) — though a hook may read the `logs` CTE's rows
 * `(id, batch_id)`: each applied action's id and the batch it joined. A failing statement
 * rolls the group back; it is then retried one action at a time, so one failing action fails
 * alone. A statement given as `{collect, committed}` has its RETURNING rows handed to
 * `committed` once the group has committed (never for a group that rolled back): the
 * webhooks feature hands the deliveries it wrote to this process's worker that way.
 *
 * `batchJoin` (the batches feature) names the batch the group's actions join; the log rows
 * carry it, so joining costs no statement of its own (repo/group-write.ts, `BatchJoin`).
 */
export interface ApplyHooks {
  writes(applied: readonly AppliedAction[]): HookStatement[];
  batchJoin?: BatchJoin;
}

/** Several hooks, their statements in order (at most one of them joins batches). */
export function composeHooks(...hooks: ApplyHooks[]): ApplyHooks {
  const joins = hooks.flatMap((h) => (h.batchJoin ? [h.batchJoin] : []));
  if (joins.length > 1) throw new Error('composeHooks: more than one hook joins batches');
  return {
    writes: (applied) => hooks.flatMap((h) => h.writes(applied)),
    ...(joins[0] ? { batchJoin: joins[0] } : {}),
  };
}

/** Until batches and webhooks exist: nothing to add. */
export const noHooks: ApplyHooks = { writes: () => [] };
