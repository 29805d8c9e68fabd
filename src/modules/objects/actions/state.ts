import { invalid, type AppError } from '../../../lib/errors.js';
import type { LocationInput } from './params.js';
import type { CustomCheck } from '../../templates/index.js';
import { geohashOf } from '../geo.js';
import { computeObjectHashes, type Location } from '../hashes.js';
import { locationOf, normalizeMetadata, type ObjectState } from '../record.js';
import type { RuleInput, TemplateInfo } from './types.js';

/** Why `custom` is refused by the template's schema (400 code 3), or null when it passes. */
export function customRefusal(input: RuleInput, custom: Record<string, unknown>): AppError | null {
  let check: CustomCheck;
  try {
    check = input.checkCustom(input.template!, custom);
  } catch {
    return invalid(
      "custom does not match the template's schema: the template's custom_schema cannot be compiled",
    );
  }
  if (check.ok) return null;
  const first = check.fields[0];
  const reason = first ? `${first.field} ${first.reason}` : 'is invalid';
  return invalid(`custom does not match the template's schema: ${reason}`, check.fields);
}

export function toLocation(l: LocationInput): Location {
  return {
    latitude: l.latitude,
    longitude: l.longitude,
    geo_hash: geohashOf(l.latitude, l.longitude),
  };
}

/** An object's location columns for a place, or none. */
export function locationColumns(
  l: Location | null,
): Pick<ObjectState, 'latitude' | 'longitude' | 'geo_hash'> {
  return {
    latitude: l?.latitude ?? null,
    longitude: l?.longitude ?? null,
    geo_hash: l?.geo_hash ?? null,
  };
}

/**
 * Sets new hashes on `next`, chained to `prev` through the action hash. `next` is a fresh
 * object of the caller's (each action builds its next state anew), so it is filled in place.
 */
export function rehash(
  next: ObjectState,
  template: TemplateInfo,
  prev: string,
  hash: string,
): ObjectState {
  const h = computeObjectHashes(
    {
      owner: next.owner,
      location: locationOf(next),
      custom: next.custom,
      metadata: normalizeMetadata(next.metadata),
      faces: template.faces,
      is_redeemed: next.is_redeemed,
      is_dropped: next.is_dropped,
    },
    prev,
    hash,
  );
  return Object.assign(next, h);
}
