import type { TransferParams } from './params.js';
import { objectAction, ownerOnly } from './object-action.js';

/** `transfer {object_id, to}`: the owner gives the object to another address. */
export const transfer = objectAction(ownerOnly, (o, input) => ({
  ...o,
  owner: (input.params as TransferParams).to.toLowerCase(),
}));
