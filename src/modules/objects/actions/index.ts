import type { ActionName } from './params.js';
import { drop } from './drop.js';
import { mint } from './mint.js';
import { pickup } from './pickup.js';
import { redeem } from './redeem.js';
import { transfer } from './transfer.js';
import type { ActionRule, RuleInput, RuleResult } from './types.js';
import { update } from './update.js';

/**
 * The rights and state transitions of each action (docs/ebus.md, "Actions and their params"), one
 * file per action. Each rule is a pure function of the object as it stands, its template and the
 * signer: no I/O, so the event bus's group committer runs them over many actions inside one
 * statement (src/modules/ebus/plan.ts).
 */
export const ACTION_RULES: Readonly<Record<ActionName, ActionRule>> = {
  mint,
  transfer,
  update,
  redeem,
  drop,
  pickup,
};

/**
 * Applies one action to the object state, or says why it is refused (403 code 7 for a
 * right or state refusal, 404 code 5 for a missing object or template, 400 code 3 for
 * custom data the template's schema refuses). The result carries new hashes, with `nonce`
 * and `version` advanced by one (a mint starts at nonce 0, version 1).
 */
export function applyAction(input: RuleInput): RuleResult {
  return ACTION_RULES[input.name](input);
}
