/**
 * What other modules may use of objects besides their service and routes: the rules of
 * actions as one interface (`ObjectRules`, the event bus applies actions with it), the
 * shapes of an object's state and record, the params of each action, an organization's
 * objects page by page (the indexer's search and query), and the schemas others answer with.
 */
export { objectRules, reapplyAction, type ActionInput, type ObjectRules } from './rules.js';
export type { RuleResult, TemplateInfo } from './actions/types.js';
export {
  ACTION_NAMES,
  ActionParams,
  Address,
  type ActionName,
  type MintParams,
  type ObjectParams,
} from './actions/params.js';
export { ImageSchema, ObjectRecordSchema, type ObjectRecord, type ObjectState } from './record.js';
export { GENESIS_HASH, type ImageRecord } from './hashes.js';
export { objectPage, type ObjectPageFilters } from './service.js';
export { ObjectIdParams, ObjectList } from './schema.js';
export { insertObjects, updateObjects } from './group-writes.js';
export { objectVisibility, PUBLIC_LIST_CHANNEL } from './visibility.js';
