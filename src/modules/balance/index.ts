/**
 * What other modules may use of balances besides their service and routes: the one way
 * a balance changes (a deposit credits it).
 */
export { recordLedgerEntry, type LedgerEntryInput } from './ledger.js';
export { insertFeeLedgerRows } from './group-writes.js';
