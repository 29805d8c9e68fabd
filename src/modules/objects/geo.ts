import ngeohash from 'ngeohash';

/** Objects carry a 9-character geohash (cells of about 5 m × 5 m). */
export const GEOHASH_PRECISION = 9;

/** The geohash alphabet (base32 without a, i, l, o); the public list's prefix filter uses it. */
export const GEOHASH_PATTERN = '^[0-9bcdefghjkmnpqrstuvwxyz]{1,12}$';

/** True for a latitude in [-90, 90] and a longitude in [-180, 180]. */
export function isValidPosition(latitude: number, longitude: number): boolean {
  return (
    Number.isFinite(latitude) &&
    Number.isFinite(longitude) &&
    latitude >= -90 &&
    latitude <= 90 &&
    longitude >= -180 &&
    longitude <= 180
  );
}

/** `location.geo_hash` of an object at (latitude, longitude); the event bus stores it on mint and drop. */
export function geohashOf(latitude: number, longitude: number): string {
  if (!isValidPosition(latitude, longitude)) throw new RangeError('position out of range');
  return ngeohash.encode(latitude, longitude, GEOHASH_PRECISION);
}
