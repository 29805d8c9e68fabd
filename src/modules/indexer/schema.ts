import { ActionLogSchema } from '../ebus/index.js';
import { Type, type Static } from 'typebox';
import { dateFilterProperties, ListEnvelope, listQueryProperties } from '../../lib/list.js';
import { IdParam } from '../../lib/ids.js';

export const SearchQuery = Type.Object({
  ...listQueryProperties,
  q: Type.String({ minLength: 1, maxLength: 200, description: 'words to find' }),
});
export type SearchQuery = Static<typeof SearchQuery>;

/**
 * Structured filters. `custom.<field>=<value>` (any number up to MAX_CUSTOM_FILTERS)
 * matches objects whose custom field equals the value; a dotted field reaches into
 * nested objects (`custom.size.width=3`).
 */
export const StructuredQuery = Type.Object(
  {
    ...listQueryProperties,
    template_id: Type.Optional(Type.String({ maxLength: 64 })),
    owner: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: Type.String({ maxLength: 256 }) },
);
export type StructuredQuery = Static<typeof StructuredQuery> & Record<string, unknown>;

export const HistoryParams = Type.Object({ id: IdParam('object') });

export const HistoryQuery = Type.Object({
  limit: listQueryProperties.limit,
  next: listQueryProperties.next,
  order: listQueryProperties.order,
  sortBy: listQueryProperties.sortBy,
  ...dateFilterProperties('when_created'),
});
export type HistoryQuery = Static<typeof HistoryQuery>;

/**
 * An object's history is action log records, the event bus's own (docs/ebus.md, "The action log
 * record").
 */
export const ActionLogRecord = ActionLogSchema;
export type ActionLogRecord = Static<typeof ActionLogSchema>;

export const HistoryList = ListEnvelope('action_logs', ActionLogRecord);
