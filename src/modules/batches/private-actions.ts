import { Type, type Static } from 'typebox';
import type { Db } from '../../db/pool.js';
import { notFound } from '../../lib/errors.js';
import { IdParam } from '../../lib/ids.js';
import { requireOrg, type AuthContext } from '../../lib/permissions.js';
import { actionLogPage, batchLeaves } from '../ebus/index.js';
import { ActionLogSchema } from '../ebus/index.js';
import { actionSalt, privateCommitment } from './formulas.js';
import * as repo from './repo/batches.js';

export const PrivateActionParams = Type.Object({
  batchId: IdParam('batch'),
  actionId: IdParam('action'),
});

/** An action of the caller's organization as its batch sealed it (docs/batches.md). */
export const PrivateActionRecord = Type.Object({
  action: ActionLogSchema,
  integrity_hash: Type.String({ description: "the object's integrity hash this action left" }),
  private: Type.Boolean({
    description:
      'the batch sealed it private: it shows only a commitment (version 4) or hashes (version 3) of it (false for one sealed public whose object is private now, which the batch shows by its hashes, its leaf)',
  }),
  version: Type.Integer({ description: "the batch's content version" }),
  salt: Type.Union([Type.String(), Type.Null()], {
    description: 'a private action of a version 4 batch: its salt, 0x + 64 hex; else null',
  }),
  commitment: Type.Union([Type.String(), Type.Null()], {
    description:
      'H("ons private action v1" ‖ 0x00 ‖ salt ‖ hash ‖ integrity_hash): its actions_hash leaf; else null',
  }),
  leaf: Type.String({ description: 'the data of its actions_hash leaf (commitment or hash)' }),
});
export type PrivateActionRecord = Static<typeof PrivateActionRecord>;

/**
 * The full record of an action in a batch for a member of the organization that executed it
 * (`objects.read`): what the public content leaves out of a private action, with the salt
 * that opens its commitment. Another organization's action, or one of another batch,
 * answers 404 as one that does not exist.
 */
export async function privateActionRecord(
  db: Db,
  saltKey: Buffer,
  auth: AuthContext,
  batchId: string,
  actionId: string,
): Promise<PrivateActionRecord> {
  const orgId = requireOrg(auth);
  const page = await actionLogPage(db, orgId, { limit: 1 }, { id: actionId });
  const action = page.items[0];
  if (action === undefined || action.batch_id !== batchId) throw notFound('action in this batch');
  const batch = await repo.findBatch(db, batchId);
  if (batch === null) throw notFound('action in this batch');
  const leaf = (await batchLeaves(db, batchId)).find((l) => l.id === actionId);
  if (leaf === undefined) throw notFound('action in this batch');
  // Sealed: as its header froze it; still building: as its object is now.
  const isPrivate =
    batch.private_actions !== null ? batch.private_actions.includes(actionId) : leaf.private;
  const salted = isPrivate && batch.version >= 4;
  const salt = salted ? actionSalt(saltKey, actionId) : null;
  const commitment = salt ? privateCommitment(salt, action.hash, leaf.integrity_hash) : null;
  return {
    action,
    integrity_hash: leaf.integrity_hash,
    private: isPrivate,
    version: batch.version,
    salt: salt ? `0x${salt.toString('hex')}` : null,
    commitment,
    leaf: commitment ?? action.hash,
  };
}
