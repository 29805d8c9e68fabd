/**
 * What other modules may use of objects besides their service and routes: an
 * organization's objects page by page (the indexer's search and query), and the record.
 * The event bus applies actions with the rules of actions/ and the shapes of record.ts.
 */
export { objectPage, type ObjectPageFilters } from './service.js';
export type { ObjectRecord } from './record.js';
