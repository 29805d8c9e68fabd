import type { DropParams } from './params.js';
import { objectAction, ownerOnly } from './object-action.js';
import { locationColumns, toLocation } from './state.js';

/** `drop {object_id, location}`: the owner leaves the object at a place, for anyone to pick up. */
export const drop = objectAction(ownerOnly, (o, input) => ({
  ...o,
  is_dropped: true,
  ...locationColumns(toLocation((input.params as DropParams).location)),
}));
