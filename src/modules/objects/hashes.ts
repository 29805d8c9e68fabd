import { canonicalJson } from '../../lib/canonical-json.js';
import { hashJson, sha256Hex } from '../../lib/hash.js';
import type { Face } from '../templates/index.js';

/** The hash an object's chain starts from: its mint has no previous state. */
export const GENESIS_HASH = '0x' + '0'.repeat(64);

export interface Location {
  latitude: number;
  longitude: number;
  geo_hash: string;
}

export interface ObjectMetadata {
  name: string;
  description: string;
  category: string;
  image: ImageRecord | null;
  edition: number;
}

export interface ImageRecord {
  id: string;
  name: string;
  type: string;
  url: string;
  hash: string;
  is_public: boolean;
  when_created: string;
}

export interface ObjectState {
  owner: string;
  location: Location | null;
  custom: Record<string, unknown>;
  metadata: ObjectMetadata;
  faces: Face[];
  is_redeemed: boolean;
  is_dropped: boolean;
}

export interface ObjectHashes {
  custom_hash: string;
  content_hash: string;
  state_hash: string;
  integrity_hash: string;
  prev_integrity_hash: string;
}

/**
 * The canonical JSON of a template's faces, remembered per faces array: every object of a
 * template hashes the same faces, which may be long (their content), on every action.
 */
const facesText = new WeakMap<Face[], string>();
function facesJson(faces: Face[]): string {
  let text = facesText.get(faces);
  if (text === undefined) {
    text = canonicalJson(faces);
    facesText.set(faces, text);
  }
  return text;
}

/**
 * The hash fields (docs/objects.md, "Hashes"), each SHA-256 over RFC 8785 canonical JSON:
 * custom_hash = H(custom); content_hash = H({metadata, faces});
 * state_hash = H({owner, location, custom_hash, is_redeemed, is_dropped});
 * integrity_hash = H({prev_integrity_hash, state_hash, content_hash, action_hash}).
 * Anyone holding the object record, its template's faces and the action hash can
 * recompute them; docs/objects.md spells out the same formulas.
 */
export function computeObjectHashes(
  state: ObjectState,
  prevIntegrityHash: string,
  actionHash: string,
): ObjectHashes {
  const custom_hash = hashJson(state.custom);
  // = hashJson({metadata, faces}): the keys in canonical order, the faces' text remembered.
  const content_hash = sha256Hex(
    `{"faces":${facesJson(state.faces)},"metadata":${canonicalJson(state.metadata)}}`,
  );
  const state_hash = hashJson({
    owner: state.owner,
    location: state.location,
    custom_hash,
    is_redeemed: state.is_redeemed,
    is_dropped: state.is_dropped,
  });
  const integrity_hash = hashJson({
    prev_integrity_hash: prevIntegrityHash,
    state_hash,
    content_hash,
    action_hash: actionHash,
  });
  return {
    custom_hash,
    content_hash,
    state_hash,
    integrity_hash,
    prev_integrity_hash: prevIntegrityHash,
  };
}
