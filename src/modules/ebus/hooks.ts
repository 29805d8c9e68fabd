import type { BatchJoin, HookStatement } from './repo/group-write.js';

export type { BatchJoin, HookStatement };
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
  /**
   * `optimistic`: the group is written by the optimistic path (apply-group.ts), which falls
   * back to the locked path when a guard fails. There a hook may leave out what it remembers
   * to be unneeded, as long as it adds a guard (`{guard}`) that fails when that is no longer
   * so; the locked path's statement must not rely on memory.
   */
  writes(applied: readonly AppliedAction[], optimistic: boolean): HookStatement[];
  /** An optimistic group of these organizations failed: forget what was remembered of them. */
  forget?(orgIds: readonly string[]): void;
  batchJoin?: BatchJoin;
}

/** Several hooks, their statements in order (at most one of them joins batches). */
export function composeHooks(...hooks: ApplyHooks[]): ApplyHooks {
  const joins = hooks.flatMap((h) => (h.batchJoin ? [h.batchJoin] : []));
  if (joins.length > 1) throw new Error('composeHooks: more than one hook joins batches');
  return {
    writes: (applied, optimistic) => hooks.flatMap((h) => h.writes(applied, optimistic)),
    forget: (orgIds) => hooks.forEach((h) => h.forget?.(orgIds)),
    ...(joins[0] ? { batchJoin: joins[0] } : {}),
  };
}

/** Until batches and webhooks exist: nothing to add. */
export const noHooks: ApplyHooks = { writes: () => [] };
