import ngeohash from 'ngeohash';

/** Geohash of a point at precision 9 (~5 m), as objects store it in `geo_hash`. */
export function geohashOf(latitude: number, longitude: number): string {
  return ngeohash.encode(latitude, longitude, 9);
}
