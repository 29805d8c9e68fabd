/**
 * What other modules may use of spend policies besides their service and routes: the event
 * bus's two calls (`PolicyStates`: the set and use of an organization, remembered or read
 * under its row lock), the checks of one share of a group (`PolicyGate`) and the group
 * statement's part that adds the use and re-checks the caps (`policyUseCte`).
 */
export { PolicyStates } from './states.js';
export { PolicyGate, type PolicyCharge, type PolicySet } from './gate.js';
export { policyUseCte } from './group-writes.js';
