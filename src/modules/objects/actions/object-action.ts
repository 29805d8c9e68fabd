import { AppError, forbidden, notFound } from '../../../lib/errors.js';
import type { ObjectParams } from './params.js';
import type { ObjectState } from '../record.js';
import { rehash } from './state.js';
import { refuse, type ActionRule, type RuleInput, type TemplateInfo } from './types.js';

/** Who may act on the object: the refusal (403 code 7), or null when the signer may. */
export type MayAct = (object: ObjectState, input: RuleInput) => AppError | null;

/** The object after the action, before nonce, version and hashes move; or the refusal. */
export type Change = (object: ObjectState, input: RuleInput) => ObjectState | AppError;

export const objectIdOf = (input: RuleInput): string => (input.params as ObjectParams).object_id;

/** Only the owner, and not while the object is dropped (only pickup takes a dropped object). */
export const ownerOnly: MayAct = (object, input) => {
  const id = objectIdOf(input);
  if (object.owner !== input.signerAddress) {
    return forbidden(`only the owner of object ${id} may ${input.name} it`);
  }
  if (object.is_dropped) return forbidden(`object ${id} is dropped; it can only be picked up`);
  return null;
};

/**
 * A private object is not there for a signer outside its organization who does not own it:
 * the same 404 as a missing object, so no refusal tells its existence, its state (redeemed,
 * dropped, its template's actions) or, through a pickup, its data. The object's flag is a
 * copy of its template's, changed without a new version: a remembered object may still say
 * public after its template went private, so either saying private hides it (the group
 * statement checks both against the database: the template whole, the object's flag).
 */
const hiddenFrom = (o: ObjectState, template: TemplateInfo, input: RuleInput): boolean =>
  (!o.is_public || !template.is_public) &&
  o.organization_id !== input.actingOrgId &&
  o.owner !== input.signerAddress;

/**
 * The rule of an action on an existing object (every action but mint). The object and its
 * template must exist, and a private object be the signer's organization's or its own (404
 * code 5), the object must not be redeemed and the template must
 * list the action (403 code 7); then `may` says whether the signer may act and `change`
 * what the action does. The result has `nonce` and `version` advanced by one and new hashes
 * chained to the object's integrity hash.
 */
export function objectAction(may: MayAct, change: Change): ActionRule {
  return (input) => {
    const { object: o, template } = input;
    const id = objectIdOf(input);
    if (!o || !template || hiddenFrom(o, template, input)) return refuse(notFound(`object ${id}`));
    if (o.is_redeemed)
      return refuse(forbidden(`object ${id} is redeemed; it accepts no more actions`));
    if (!template.actions.includes(input.name)) {
      return refuse(forbidden(`the template of object ${id} does not list ${input.name}`));
    }
    const refusal = may(o, input);
    if (refusal) return refuse(refusal);
    const next = change(o, input);
    if (next instanceof AppError) return refuse(next);
    const advanced: ObjectState = {
      ...next,
      nonce: o.nonce + 1,
      version: o.version + 1,
      updated_at: input.now,
    };
    return { ok: true, next: rehash(advanced, template, o.integrity_hash, input.actionHash) };
  };
}
