import { canonicalJson } from '../actions/canonical-json.js';
import { hex, sha256, utf8 } from './bytes.js';
import { fail, pass, type ActionRecord, type PublicObject, type Verdict } from './types.js';

/** H(x) = `0x` + hex SHA-256 of the RFC 8785 JSON of x (docs/objects.md). */
const H = (v: unknown): string => hex(sha256(utf8(canonicalJson(v))));

export const GENESIS_HASH = `0x${'0'.repeat(64)}`;

/**
 * What the chain needs of the object's template: the version an action was applied with
 * (`GET /public/templates/{id}/versions/{version}`, the record's `template_version`), or the
 * template as it is now (`GET /public/templates/{id}`).
 */
export interface TemplateInfo {
  name: string;
  description: string;
  category: string;
  faces: unknown[];
}

/**
 * The template each action was applied with: one for all of them, or per action (null when
 * it cannot be had, which fails the chain naming `template`).
 */
export type TemplateOf = TemplateInfo | ((action: ActionRecord) => TemplateInfo | null);

type Location = { latitude: number; longitude: number; geo_hash: string } | null;
interface State {
  owner: string;
  location: Location;
  custom: Record<string, unknown>;
  metadata: Record<string, unknown>;
  is_redeemed: boolean;
  is_dropped: boolean;
}

const BASE32 = '0123456789bcdefghjkmnpqrstuvwxyz';

/** The 9-character geohash objects carry (the service uses ngeohash's encoding). */
export function geohash(latitude: number, longitude: number, chars = 9): string {
  let [minLat, maxLat, minLon, maxLon] = [-90, 90, -180, 180];
  let out = '';
  let bits = 0;
  let value = 0;
  let even = true;
  while (out.length < chars) {
    if (even) {
      const mid = (maxLon + minLon) / 2;
      value = value * 2 + (longitude > mid ? 1 : 0);
      if (longitude > mid) minLon = mid;
      else maxLon = mid;
    } else {
      const mid = (maxLat + minLat) / 2;
      value = value * 2 + (latitude > mid ? 1 : 0);
      if (latitude > mid) minLat = mid;
      else maxLat = mid;
    }
    even = !even;
    if (++bits === 5) {
      out += BASE32[value];
      bits = 0;
      value = 0;
    }
  }
  return out;
}

function place(p: unknown): Location {
  const l = p as { latitude: number; longitude: number };
  return {
    latitude: l.latitude,
    longitude: l.longitude,
    geo_hash: geohash(l.latitude, l.longitude),
  };
}

/** The state one action leaves (docs/objects.md; the rules of src/modules/objects/actions). */
function apply(prev: State | null, a: ActionRecord, t: TemplateInfo): State {
  const p = a.params as Record<string, unknown>;
  if (a.name === 'mint') {
    return {
      owner: ((p.owner as string | undefined) ?? a.wallet).toLowerCase(),
      location: p.location ? place(p.location) : null,
      custom: (p.custom as Record<string, unknown> | undefined) ?? {},
      metadata: {
        name: t.name,
        description: t.description,
        category: t.category,
        image: null,
        edition: 1,
        ...(p.metadata as Record<string, unknown> | undefined),
      },
      is_redeemed: false,
      is_dropped: false,
    };
  }
  if (prev === null) throw new Error(`${a.name} before the mint`);
  const s = { ...prev };
  switch (a.name) {
    case 'transfer':
      s.owner = (p.to as string).toLowerCase();
      break;
    case 'update':
      if (p.custom) s.custom = p.custom as Record<string, unknown>;
      if (p.metadata) {
        s.metadata = { ...prev.metadata, ...(p.metadata as Record<string, unknown>) };
      }
      break;
    case 'drop':
      s.is_dropped = true;
      s.location = place(p.location);
      break;
    case 'pickup':
      s.owner = a.wallet.toLowerCase();
      s.is_dropped = false;
      break;
    case 'redeem':
      s.is_redeemed = true;
      break;
  }
  return s;
}

const OWNER_ONLY = new Set(['transfer', 'update', 'redeem', 'drop']);

/**
 * Why the service would have refused the action on the object as replayed so far (its
 * rules, src/modules/objects/actions and docs/ebus.md, "Refusals"), as `[failed, reason]`;
 * null when it would apply it. The signed params must name the object (a mint: its template),
 * and the action must come in time, in the object's state, from its owner.
 */
function refusal(
  prev: State | null,
  a: ActionRecord,
  object: PublicObject,
): [string, string] | null {
  const p = (a.params ?? {}) as Record<string, unknown>;
  const wallet = a.wallet.toLowerCase();
  if (a.expires !== null && Date.parse(a.when_created) > Date.parse(a.expires)) {
    return ['expired', `action ${a.id} was applied at ${a.when_created}, after it expired`];
  }
  if (a.name === 'mint') {
    if (prev !== null) return ['mint', `action ${a.id} mints the object again`];
    for (const [what, id] of [
      ['object', object.template_id],
      ['record', a.template_id],
    ] as const) {
      if (id !== undefined && id !== null && p.template_id !== id) {
        return [
          'template_id',
          `mint ${a.id} was signed for template ${String(p.template_id)}, its ${what} says ${id}`,
        ];
      }
    }
    return null;
  }
  if (p.object_id !== a.object_id) {
    return ['object_id', `action ${a.id} was signed for object ${String(p.object_id)}`];
  }
  if (prev === null) return ['history', `action ${a.id} comes before the mint`];
  if (prev.is_redeemed) {
    return ['redeemed', `action ${a.id} (${a.name}) comes after the object was redeemed`];
  }
  if (a.name === 'pickup') {
    return prev.is_dropped ? null : ['dropped', `pickup ${a.id} of an object not dropped`];
  }
  if (prev.is_dropped) {
    return ['dropped', `action ${a.id} (${a.name}) on a dropped object (only pickup takes it)`];
  }
  if (OWNER_ONLY.has(a.name) && prev.owner !== wallet) {
    return ['owner_only', `action ${a.id} (${a.name}) by ${wallet}, not the owner ${prev.owner}`];
  }
  return null;
}

/** The hash fields of an object in a state, chained to `prev` through the action's hash. */
export function objectHashes(s: State, faces: unknown[], prev: string, actionHash: string) {
  const custom_hash = H(s.custom);
  const content_hash = H({ metadata: s.metadata, faces });
  const state_hash = H({
    owner: s.owner,
    location: s.location,
    custom_hash,
    is_redeemed: s.is_redeemed,
    is_dropped: s.is_dropped,
  });
  const integrity_hash = H({
    prev_integrity_hash: prev,
    state_hash,
    content_hash,
    action_hash: actionHash,
  });
  return { custom_hash, content_hash, state_hash, integrity_hash };
}

/** What replaying an object's chain found: the verdict and each action's integrity hash. */
export interface ChainResult {
  verdict: Verdict;
  /** The integrity hash each action of the history left, by action id. */
  integrityByAction: Map<string, string>;
}

/**
 * (b) Replays an object's history from its mint (the actions oldest first, as
 * `GET /public/objects/{id}/history?order=asc` lists them), recomputing every hash of
 * docs/objects.md, and checks that the chain ends in the object as served: its state,
 * `custom_hash`, `content_hash`, `state_hash`, `prev_integrity_hash` and `integrity_hash`.
 * The chain hashes the template's faces at every action and takes its name, description and
 * category at the mint, so each action is replayed with `templateOf(action)`: the template
 * version it was applied with (its record's `template_version`; `verifyNetwork` fetches
 * them). A single template replays every action with it (right only while the template has
 * not changed since the mint). Each action must be one the service would have applied there
 * (failed names the rule): signed for this object (`object_id`; a mint for its template,
 * `template_id`), not after its `expires` (`expired`), one mint only (`mint`), nothing after
 * a redeem (`redeemed`), only pickup on a dropped object and pickup only on one (`dropped`),
 * transfer, update, drop and redeem only by the owner (`owner_only`).
 */
export function verifyObjectChain(
  object: PublicObject,
  history: readonly ActionRecord[],
  templateOf: TemplateOf,
): ChainResult {
  const item = `object ${object.id}`;
  const integrityByAction = new Map<string, string>();
  const out = (verdict: Verdict): ChainResult => ({ verdict, integrityByAction });
  if (history.length === 0 || history[0]!.name !== 'mint') {
    return out(fail(item, 'history', 'the history does not start with its mint'));
  }
  let state: State | null = null;
  let prev = GENESIS_HASH;
  let last: ReturnType<typeof objectHashes> | null = null;
  let prevOfLast = GENESIS_HASH;
  for (const a of history) {
    if (a.object_id !== object.id) {
      return out(fail(item, 'history', `action ${a.id} acts on ${String(a.object_id)}`));
    }
    const template = typeof templateOf === 'function' ? templateOf(a) : templateOf;
    if (template === null) {
      return out(
        fail(
          item,
          'template',
          `version ${String(a.template_version)} of its template is not served (action ${a.id})`,
        ),
      );
    }
    const refused = refusal(state, a, object);
    if (refused) return out(fail(item, refused[0], refused[1]));
    state = apply(state, a, template);
    last = objectHashes(state, template.faces, prev, a.hash);
    integrityByAction.set(a.id, last.integrity_hash);
    prevOfLast = prev;
    prev = last.integrity_hash;
  }
  const s = state!;
  const fields: [string, unknown, unknown][] = [
    ['owner', s.owner, object.owner],
    ['location', s.location, object.location],
    ['custom', s.custom, object.custom],
    ['metadata', s.metadata, object.metadata],
    ['is_redeemed', s.is_redeemed, object.is_redeemed],
    ['is_dropped', s.is_dropped, object.is_dropped],
    ['custom_hash', last!.custom_hash, object.custom_hash],
    ['content_hash', last!.content_hash, object.content_hash],
    ['state_hash', last!.state_hash, object.state_hash],
    ['prev_integrity_hash', prevOfLast, object.prev_integrity_hash],
    ['integrity_hash', last!.integrity_hash, object.integrity_hash],
  ];
  for (const [name, replayed, served] of fields) {
    if (canonicalJson(replayed) !== canonicalJson(served)) {
      return out(
        fail(item, name, `the served ${name} is not what its ${history.length} actions leave`),
      );
    }
  }
  return out(pass(item));
}
