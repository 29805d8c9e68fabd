import { forbidden } from '../../../lib/errors.js';
import { objectAction, objectIdOf } from './object-action.js';

/**
 * `pickup {object_id}`: anyone picks up a dropped object and becomes its owner; the object
 * keeps the place it was found at.
 */
export const pickup = objectAction(
  (o, input) =>
    o.is_dropped
      ? null
      : forbidden(
          `object ${objectIdOf(input)} is not dropped; only a dropped object can be picked up`,
        ),
  (o, input) => ({ ...o, owner: input.signerAddress, is_dropped: false }),
);
