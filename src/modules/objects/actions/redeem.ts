import { objectAction, ownerOnly } from './object-action.js';

/** `redeem {object_id}`: the owner redeems the object; afterwards it accepts nothing more. */
export const redeem = objectAction(ownerOnly, (o) => ({ ...o, is_redeemed: true }));
