import type { PolicyValues } from './repo.js';

/** A policy's limits: what `PUT /policies/{id}` replaces besides the name. */
export type PolicyLimits = Omit<PolicyValues, 'name'>;
export type LimitField = keyof PolicyLimits;

type Wei = string | number | null;

/** A cap or largest fee (null: none) that `next` raises or removes. */
const raised = (stored: Wei, next: Wei): boolean =>
  stored !== null && (next === null || BigInt(next) > BigInt(stored));

/** A list of what is allowed (null: everything) to which `next` adds, or which it removes. */
const widened = (stored: readonly string[] | null, next: readonly string[] | null): boolean =>
  stored !== null && (next === null || next.some((x) => !stored.includes(x)));

/** A list of what is denied (null: nothing) from which `next` takes something away. */
const narrowed = (stored: readonly string[] | null, next: readonly string[] | null): boolean =>
  stored !== null && stored.some((x) => !(next ?? []).includes(x));

/**
 * When each limit of `next` allows more than the stored one (docs/policies.md, "Lifting a
 * limit"). A field is compared with the same field alone: a change that allows more in one
 * field counts, even if another field refuses the same actions anyway.
 *
 * - `spend_cap_wei`, `max_actions`, `max_fee_wei`: a larger number, or none where there was one.
 * - `period`: any change of a window there was (to another, or to none). A shorter window with
 *   the same cap lets the cap be spent again every shorter window. A longer one would allow
 *   less, were it not that a new period starts the use afresh (the buckets of the old one mean
 *   nothing in the new): what was spent in the current window is forgotten, so the whole cap
 *   may be spent again at once on top of it. A window where there was none comes with a cap.
 * - `allowed_actions`, `allowed_templates`: a name not in the stored list, or no list (which
 *   allows everything; for templates, also actions without a template). Order is ignored.
 * - `denied_actions`, `denied_templates`: a stored name left out, or no list (denies nothing).
 *
 * Adding a limit where there was none, or sending the stored limits again, allows no more.
 * The record's type asks a rule of every field a policy stores, so a new field cannot be
 * forgotten here.
 */
const LOOSER: { readonly [F in LimitField]: (s: PolicyLimits, n: PolicyLimits) => boolean } = {
  period: (s, n) => s.period !== null && n.period !== s.period,
  spend_cap_wei: (s, n) => raised(s.spend_cap_wei, n.spend_cap_wei),
  max_actions: (s, n) => raised(s.max_actions, n.max_actions),
  allowed_actions: (s, n) => widened(s.allowed_actions, n.allowed_actions),
  denied_actions: (s, n) => narrowed(s.denied_actions, n.denied_actions),
  allowed_templates: (s, n) => widened(s.allowed_templates, n.allowed_templates),
  denied_templates: (s, n) => narrowed(s.denied_templates, n.denied_templates),
  max_fee_wei: (s, n) => raised(s.max_fee_wei, n.max_fee_wei),
};

/** Every limit a policy stores, in the order the API lists them. */
export const LIMIT_FIELDS = Object.keys(LOOSER) as LimitField[];

/**
 * The limits in which `next` allows more than `stored` (empty: it allows nothing more, so a
 * caller may send it without a recent sign-in). Pure.
 */
export function looserLimits(stored: PolicyLimits, next: PolicyLimits): LimitField[] {
  return LIMIT_FIELDS.filter((f) => LOOSER[f](stored, next));
}
