import { AppError, Code, forbidden, invalid, notFound } from '../../lib/errors.js';
import { permissionsOfRole, type Role } from '../../lib/permissions.js';
import { computeObjectHashes, GENESIS_HASH, type Location } from '../objects/hashes.js';
import { locationOf, normalizeMetadata } from '../objects/record.js';
import { geohashOf } from '../objects/geo.js';
import type { CustomCheck } from '../templates/service.js';
import type {
  ActionName,
  DropParams,
  LocationInput,
  MetadataInput,
  MintParams,
  ObjectParams,
  TransferParams,
  UpdateParams,
} from './schema.js';
import type { ObjectState, TemplateInfo } from './types.js';

/**
 * The rights and state transitions of each action (design.md §5, issue 7 acceptance 3),
 * as pure functions of the current object, its template and the signer: no I/O, so the
 * group committer can run them over many actions inside one transaction.
 */
export interface RuleInput {
  name: ActionName;
  params: Record<string, unknown>;
  signerAddress: string;
  /** The signer's role in the template's organization (mint); null when not a member. */
  signerRoleInTemplateOrg: Role | null;
  /** The object as it stands (after earlier actions of the same group); null for mint. */
  object: ObjectState | null;
  /** The template of the object (or, for mint, of params.template_id); null if missing. */
  template: TemplateInfo | null;
  actionHash: string;
  now: Date;
  /** Id for a minted object. */
  newObjectId: string;
  /** Checks `custom` against the template's custom_schema (templates' `validateCustom`). */
  checkCustom: (template: TemplateInfo, custom: Record<string, unknown>) => CustomCheck;
}

export type RuleResult = { ok: true; next: ObjectState } | { ok: false; error: AppError };

const refuse = (error: AppError): RuleResult => ({ ok: false, error });

/** Why `custom` is refused by the template's schema (400 code 3), or null when it passes. */
function customRefusal(input: RuleInput, custom: Record<string, unknown>): AppError | null {
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

function toLocation(l: LocationInput): Location {
  return {
    latitude: l.latitude,
    longitude: l.longitude,
    geo_hash: geohashOf(l.latitude, l.longitude),
  };
}

function mergeMetadata(
  current: ObjectState['metadata'],
  change: MetadataInput | undefined,
): ObjectState['metadata'] {
  if (!change) return current;
  return { ...current, ...change };
}

/**
 * Sets new hashes on `next`, chained to `prev` through the action hash. `next` is a fresh
 * object of the caller's (each action builds its next state anew), so it is filled in place.
 */
function rehash(
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

/** An object's location columns for a place, or none. */
function locationColumns(
  l: Location | null,
): Pick<ObjectState, 'latitude' | 'longitude' | 'geo_hash'> {
  return {
    latitude: l?.latitude ?? null,
    longitude: l?.longitude ?? null,
    geo_hash: l?.geo_hash ?? null,
  };
}

function mint(input: RuleInput): RuleResult {
  const p = input.params as MintParams;
  const t = input.template;
  if (!t) return refuse(notFound(`template ${p.template_id}`));
  const role = input.signerRoleInTemplateOrg;
  if (!role || !permissionsOfRole(role).has('objects.create')) {
    return refuse(
      forbidden("the signer must be a member of the template's organization with objects.create"),
    );
  }
  if (!t.actions.includes('mint')) return refuse(forbidden(`template ${t.id} does not list mint`));
  const custom = (p.custom ?? {}) as Record<string, unknown>;
  const bad = customRefusal(input, custom);
  if (bad) return refuse(bad);
  const metadata: ObjectState['metadata'] = normalizeMetadata({
    name: t.name,
    description: t.description,
    category: t.category,
    ...p.metadata,
  }) as ObjectState['metadata'];
  const row: ObjectState = {
    id: input.newObjectId,
    organization_id: t.organization_id,
    template_id: t.id,
    owner: (p.owner ?? input.signerAddress).toLowerCase(),
    metadata,
    custom,
    custom_hash: '',
    ...locationColumns(p.location ? toLocation(p.location) : null),
    ownership_claimed: false,
    is_redeemed: false,
    is_dropped: false,
    is_public: t.is_public,
    nonce: 0,
    version: 1,
    state_hash: '',
    content_hash: '',
    integrity_hash: '',
    prev_integrity_hash: GENESIS_HASH,
    collection_id: p.collection_id ?? null,
    created_at: input.now,
    updated_at: input.now,
  };
  return { ok: true, next: rehash(row, t, GENESIS_HASH, input.actionHash) };
}

/** Checks shared by every action on an existing object; returns the refusal or null. */
function existingObjectRefusal(input: RuleInput): AppError | null {
  const o = input.object;
  const id = (input.params as ObjectParams).object_id;
  if (!o || !input.template) return notFound(`object ${id}`);
  if (o.is_redeemed) return forbidden(`object ${id} is redeemed; it accepts no more actions`);
  if (!input.template.actions.includes(input.name)) {
    return forbidden(`the template of object ${id} does not list ${input.name}`);
  }
  if (input.name === 'pickup') {
    return o.is_dropped
      ? null
      : forbidden(`object ${id} is not dropped; only a dropped object can be picked up`);
  }
  if (o.owner !== input.signerAddress) {
    return forbidden(`only the owner of object ${id} may ${input.name} it`);
  }
  if (o.is_dropped) return forbidden(`object ${id} is dropped; it can only be picked up`);
  return null;
}

function change(input: RuleInput): ObjectState | AppError {
  const o = input.object!;
  switch (input.name) {
    case 'transfer':
      return { ...o, owner: (input.params as TransferParams).to.toLowerCase() };
    case 'update': {
      const p = input.params as UpdateParams;
      const custom = p.custom as Record<string, unknown> | undefined;
      if (custom) {
        const bad = customRefusal(input, custom);
        if (bad) return bad;
      }
      return {
        ...o,
        custom: custom ?? o.custom,
        metadata: mergeMetadata(
          normalizeMetadata(o.metadata) as ObjectState['metadata'],
          p.metadata,
        ),
      };
    }
    case 'redeem':
      return { ...o, is_redeemed: true };
    case 'drop':
      return {
        ...o,
        is_dropped: true,
        ...locationColumns(toLocation((input.params as DropParams).location)),
      };
    case 'pickup':
      // The picker becomes the owner; the object keeps the place it was found at.
      return { ...o, owner: input.signerAddress, is_dropped: false };
    case 'mint':
      return new AppError(Code.INTERNAL, 'mint is not a change of an existing object');
  }
}

/**
 * Applies one action to the object state, or says why it is refused (403 code 7 for a
 * right or state refusal, 404 code 5 for a missing object or template, 400 code 3 for
 * custom data the template's schema refuses). The result carries new hashes, with `nonce`
 * and `version` advanced by one (a mint starts at nonce 0, version 1).
 */
export function applyAction(input: RuleInput): RuleResult {
  if (input.name === 'mint') return mint(input);
  const refusal = existingObjectRefusal(input);
  if (refusal) return refuse(refusal);
  const o = input.object!;
  const next = change(input);
  if (next instanceof AppError) return refuse(next);
  const advanced: ObjectState = {
    ...next,
    nonce: o.nonce + 1,
    version: o.version + 1,
    updated_at: input.now,
  };
  return { ok: true, next: rehash(advanced, input.template!, o.integrity_hash, input.actionHash) };
}
