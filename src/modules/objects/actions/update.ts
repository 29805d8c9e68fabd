import type { MetadataInput, UpdateParams } from './params.js';
import { normalizeMetadata, type ObjectState } from '../record.js';
import { objectAction, ownerOnly } from './object-action.js';
import { customRefusal } from './state.js';

function mergeMetadata(
  current: ObjectState['metadata'],
  change: MetadataInput | undefined,
): ObjectState['metadata'] {
  if (!change) return current;
  return { ...current, ...change };
}

/**
 * `update {object_id, custom?, metadata?}`: the owner replaces `custom` (checked against the
 * template's custom_schema, 400 code 3) and merges `metadata` into the object's.
 */
export const update = objectAction(ownerOnly, (o, input) => {
  const p = input.params as UpdateParams;
  const custom = p.custom as Record<string, unknown> | undefined;
  if (custom) {
    const bad = customRefusal(input, custom);
    if (bad) return bad;
  }
  return {
    ...o,
    custom: custom ?? o.custom,
    metadata: mergeMetadata(normalizeMetadata(o.metadata) as ObjectState['metadata'], p.metadata),
  };
});
