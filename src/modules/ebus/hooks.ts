import type { Executor } from '../../db/pool.js';
import type { AppliedAction } from './types.js';

/**
 * Extension points inside the apply transaction (issue 7, acceptance 9). The group
 * committer calls `afterApply` once per committed group, inside the same transaction as the
 * fees, object changes, log rows and nonces, so whatever it writes commits or rolls back
 * with them:
 * - the batches feature adds the actions to the current transaction batch (one call),
 * - the webhooks feature queues the matching deliveries in its outbox (one call).
 * A hook must not swallow errors: throwing rolls the group back (it is then retried one
 * action at a time, so one failing action fails alone).
 */
export interface ApplyHooks {
  afterApply(tx: Executor, applied: readonly AppliedAction[]): Promise<void>;
}

/** Runs several hooks in order, in the one transaction. */
export function composeHooks(...hooks: ApplyHooks[]): ApplyHooks {
  return {
    async afterApply(tx, applied) {
      for (const h of hooks) await h.afterApply(tx, applied);
    },
  };
}

/** Until batches and webhooks exist: nothing to add. */
export const noHooks: ApplyHooks = { afterApply: async () => undefined };
