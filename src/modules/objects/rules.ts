import { validateCustom } from '../templates/index.js';
import { applyAction } from './actions/index.js';
import type { RuleInput, RuleResult } from './actions/types.js';
import { toObjectRecord, type ObjectRecord, type ObjectState } from './record.js';

/** One action as the rules see it: everything a rule decides on but the custom-data check. */
export type ActionInput = Omit<RuleInput, 'checkCustom'>;

/**
 * What the event bus asks of objects (the rules of actions/, the records and hashes of
 * record.ts and hashes.ts): it decides nonces, fees and balances, and writes; objects decide
 * what an action does to an object. Pure, no I/O, so the group committer runs it over many
 * actions at once.
 */
export interface ObjectRules {
  /**
   * Applies one action to the object as it stands, or says why it is refused (403 code 7
   * for a right or state refusal, 404 code 5 for a missing object or template, 400 code 3
   * for custom data the template's schema refuses). The next state carries its new hashes.
   */
  apply(input: ActionInput): RuleResult;
  /** The record an object's state answers as. */
  record(state: ObjectState): ObjectRecord;
}

/** The rules of objects, `custom` checked against the template's schema (templates). */
export const objectRules: ObjectRules = {
  apply: (input) => applyAction({ ...input, checkCustom: validateCustom }),
  record: toObjectRecord,
};

/**
 * An action the log already holds, applied again to the state before it (the event bus's
 * replay of an answered action): its custom data was checked when it was accepted, so it is
 * not checked against the template's schema as it stands now.
 */
export function reapplyAction(input: ActionInput): RuleResult {
  return applyAction({ ...input, checkCustom: () => ({ ok: true }) });
}
