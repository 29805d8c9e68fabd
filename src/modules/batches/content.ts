import { canonicalJson, isWellFormed } from '../../lib/canonical-json.js';
import type { ActionLogRecord } from '../ebus/index.js';
import { actionSalt, privateCommitment, sortedById, type BatchHeader } from './formulas.js';
import type { BatchRow } from './repo/batches.js';

/**
 * The fields of an action log record as batch content carries it (docs/batches.md), in RFC 8785
 * order (UTF-16 code units). Version 1 has the record's fields when batches began, named here
 * so that a field the API adds later changes neither the content nor the CID of a batch
 * sealed before; version 2 adds the organization (the signed text's `organization:` line),
 * the template version the action was applied with and the object integrity hash it left.
 * A record is written straight from the logged action in this order, without building an
 * object and sorting its keys for every action; content.test.ts checks the result against
 * `canonicalJson` of such objects.
 */
const V1_KEYS = [
  'batch_id',
  'expires',
  'fee_wei',
  'hash',
  'id',
  'name',
  'nonce',
  'object_id',
  'params',
  'signature',
  'signature_type',
  'template_id',
  'wallet',
  'when_created',
] as const;
const V2_KEYS = [
  'batch_id',
  'expires',
  'fee_wei',
  'hash',
  'id',
  'integrity_hash',
  'name',
  'nonce',
  'object_id',
  'organization_id',
  'params',
  'signature',
  'signature_type',
  'template_id',
  'template_version',
  'wallet',
  'when_created',
] as const;
type ContentKey = (typeof V2_KEYS)[number];

/**
 * An action on a private object (docs/batches.md, "What is public"): version 3 (a batch sealed
 * before migration 0021, re-published) keeps only what its header already committed to: the
 * action hash and the integrity hash it left; version 4 only the salted commitment that is
 * its `actions_hash` leaf (formulas.ts, `privateCommitment`). Neither has the text, params,
 * wallet, signature, organization, template or name. RFC 8785 order.
 */
const PRIVATE_V3_KEYS = [
  'batch_id',
  'fee_wei',
  'hash',
  'id',
  'integrity_hash',
  'object_id',
  'private',
] as const;
const PRIVATE_V4_KEYS = [
  'batch_id',
  'commitment',
  'fee_wei',
  'id',
  'object_id',
  'private',
] as const;

/** The record of an action on a private object in content of `version` (3 or 4). */
function privateRecordJson(version: 3 | 4, a: ContentAction): string {
  const r = a.record;
  const values: Record<string, unknown> = {
    batch_id: r.batch_id,
    commitment: a.commitment,
    fee_wei: r.fee_wei,
    hash: r.hash,
    id: r.id,
    integrity_hash: a.integrityHash,
    object_id: r.object_id,
    private: true,
  };
  if (version === 4 && a.commitment === undefined) {
    throw new Error(`the private action ${r.id} has no commitment`);
  }
  const out: Record<string, unknown> = {};
  for (const k of version === 3 ? PRIVATE_V3_KEYS : PRIVATE_V4_KEYS) out[k] = values[k];
  // Ids, hashes and amounts only: JSON.stringify of them in key order is their RFC 8785 text.
  return JSON.stringify(out);
}
const KEY_TEXT = new Map<string, string>(V2_KEYS.map((k) => [k, `${JSON.stringify(k)}:`]));

/** RFC 8785 text of one action's content record (a member whose value is undefined is left out). */
function recordJson(keys: readonly ContentKey[], a: ContentAction): string {
  const fast = recordForStringify(keys, a);
  if (fast !== null) return JSON.stringify(fast);
  let out = '{';
  for (const k of keys) {
    const v = k === 'integrity_hash' ? a.integrityHash : a.record[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${KEY_TEXT.get(k)!}${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** Marks a value {@link inKeyOrder} cannot hand to JSON.stringify as RFC 8785 writes it. */
const SLOW = Symbol('slow');
/** An array index, which V8 puts before every other key of an object whatever their order. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;

/**
 * A copy of a JSON value (as parsed from the database) whose objects have their keys
 * inserted in RFC 8785 order, so that V8's JSON.stringify — which writes strings and numbers
 * exactly as RFC 8785 §3.2.2 asks — writes it as `canonicalJson` would, in one native call;
 * SLOW for what that does not hold for (an array-index key, a number with no JSON form, a
 * lone surrogate, a value that is not plain JSON), left to `canonicalJson`.
 */
function inKeyOrder(v: unknown): unknown {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return isWellFormed(v) ? v : SLOW;
  if (typeof v === 'number') return Number.isFinite(v) ? v : SLOW;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = inKeyOrder(v[i]);
      if (x === SLOW) return SLOW;
      out[i] = x;
    }
    return out;
  }
  if (typeof v !== 'object' || Object.getPrototypeOf(v) !== Object.prototype) return SLOW;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) {
    if (INDEX_KEY.test(k) || !isWellFormed(k)) return SLOW;
    const x = inKeyOrder(o[k]);
    if (x === SLOW) return SLOW;
    if (x !== undefined) out[k] = x;
  }
  return out;
}

/** The record as an object JSON.stringify writes in RFC 8785 form, or null (see inKeyOrder). */
function recordForStringify(
  keys: readonly ContentKey[],
  a: ContentAction,
): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    const v = k === 'integrity_hash' ? a.integrityHash : a.record[k];
    if (v === undefined) continue;
    const x = inKeyOrder(v);
    if (x === SLOW) return null;
    out[k] = x;
  }
  return out;
}

/** A batch's action as logged, with the integrity hash it left (`batchActions`). */
export interface ContentAction {
  record: ActionLogRecord;
  integrityHash: string;
  /**
   * Its object is private (as the batch's header froze it: `batches.private_actions`, or made
   * private since: {@link ContentAction.hidden}): content versions 3 and 4 carry only its
   * private record.
   */
  private?: boolean;
  /**
   * Sealed public, its object private now (views.ts): its private record is version 3's in
   * version 4 too (its `actions_hash` leaf stays its action hash, which the header committed
   * to), and it has no commitment.
   */
  hidden?: boolean;
  /** Version 4, a private action: its salted commitment (formulas.ts, `privateCommitment`). */
  commitment?: string;
}

/**
 * The content of a batch (what `ipfs_url` names and `GET /batches/{id}/content` serves), in
 * the batch's content `version`:
 * - 1: RFC 8785 JSON of `{batch, actions}`, the actions with the {@link V1_KEYS} fields;
 * - 2: RFC 8785 JSON of `{version: 2, batch, actions, objects}`, the actions with the
 *   {@link V2_KEYS} fields and `objects` the affected objects' `{id,
 *   integrity_hash}` after the batch sorted by id (byte order): the leaves of `integrity_root`;
 * - 3 and 4: version 2's layout, where an action on a private object has only its private
 *   record ({@link PRIVATE_V3_KEYS}, {@link PRIVATE_V4_KEYS}; in 4, version 3's for an action
 *   sealed public whose object was made private since) and, in 4, the entry under `objects`
 *   of an object sealed private is `{commitment, id}`.
 * RFC 8785 writes an object's members in key order ("actions" < "batch" < "objects" <
 * "version") and an array's elements joined by commas, so the text is written in three
 * pieces that joined are exactly the RFC 8785 text of the whole (content.test.ts checks it
 * against `canonicalJson`): {@link CONTENT_HEAD}, the actions' records in execution order
 * joined by commas ({@link recordText}), and {@link contentTail}. The actions come first, so
 * the text can be hashed as they are read, before the header is known.
 */
export const CONTENT_HEAD = '{"actions":[';

export type ContentVersion = 1 | 2 | 3 | 4;

/** The version every batch sealed from migration 0021 on has. */
export const CURRENT_CONTENT_VERSION = 4;

/** Throws for a content version this code does not write. */
export function assertContentVersion(version: number): asserts version is ContentVersion {
  if (![1, 2, 3, 4].includes(version)) throw new Error(`unknown batch content version ${version}`);
}

/** One action's record in a batch's content of `version`. */
export function recordText(version: number, a: ContentAction): string {
  assertContentVersion(version);
  if (version >= 3 && a.private === true) {
    return privateRecordJson(a.hidden === true ? 3 : (version as 3 | 4), a);
  }
  return recordJson(version === 1 ? V1_KEYS : V2_KEYS, a);
}

/** An `integrity_root` leaf as content versions 2–4 list it under `objects`. */
export interface ObjectLeaf {
  id: string;
  integrity_hash: string;
  /** Version 4, a private object: the commitment of its last action in the batch. */
  commitment?: string;
}

/** The value of an object's `integrity_root` leaf (after its id and 0x00). */
export const leafValue = (o: ObjectLeaf): string => o.commitment ?? o.integrity_hash;

/** The content's text after the actions: the header with its hash and, in version 2, the objects. */
export function contentTail(
  version: number,
  header: BatchHeader,
  hash: string,
  objects: readonly ObjectLeaf[],
): string {
  assertContentVersion(version);
  const fields: BatchHeader & { hash: string } = {
    id: header.id,
    sequence: header.sequence,
    prev_hash: header.prev_hash,
    prev_integrity_root: header.prev_integrity_root,
    integrity_root: header.integrity_root,
    actions_hash: header.actions_hash,
    commitment: header.commitment,
    actions_count: header.actions_count,
    total_fee_wei: header.total_fee_wei,
    when_created: header.when_created,
    hash,
  };
  const batch = `],"batch":${canonicalJson(fields)}`;
  if (version === 1) return `${batch}}`;
  const leaves = objects.map((o) =>
    o.commitment !== undefined
      ? { commitment: o.commitment, id: o.id }
      : { id: o.id, integrity_hash: o.integrity_hash },
  );
  return `${batch},"objects":${canonicalJson(leaves)},"version":${version}}`;
}

/**
 * Version 4: fills in the commitment of each private action (formulas.ts). `saltKey`: the
 * service's batch salt key (repo/keys.ts). Other versions and public actions are left as
 * they are.
 */
export function sealPrivate(
  version: number,
  actions: readonly ContentAction[],
  saltKey: Uint8Array,
): ContentAction[] {
  if (version < 4) return [...actions];
  if (
    saltKey.length !== 32 &&
    actions.some((a) => a.private === true && a.hidden !== true && !a.commitment)
  ) {
    throw new Error('a private action to seal and no 32-byte batch salt key');
  }
  return actions.map((a) =>
    a.private === true && a.hidden !== true && a.commitment === undefined
      ? {
          ...a,
          commitment: privateCommitment(
            actionSalt(saltKey, a.record.id),
            a.record.hash,
            a.integrityHash,
          ),
        }
      : a,
  );
}

/** The data of an action's `actions_hash` leaf: its commitment when it has one, else its hash. */
export const actionLeaf = (a: ContentAction): string => a.commitment ?? a.record.hash;

/**
 * The content bytes of a batch (see {@link CONTENT_HEAD}). Version 4 with private actions
 * needs their commitments: `saltKey` fills in those not given ({@link sealPrivate}).
 */
export function contentBytes(
  version: number,
  header: BatchHeader,
  hash: string,
  given: readonly ContentAction[],
  saltKey?: Uint8Array,
): Buffer {
  const actions = saltKey ? sealPrivate(version, given, saltKey) : given;
  const records = actions.map((a) => recordText(version, a)).join(',');
  const tail = contentTail(version, header, hash, sortedAffectedObjects(actions));
  return Buffer.from(`${CONTENT_HEAD}${records}${tail}`, 'utf8');
}

/**
 * The affected objects of a batch's actions with the integrity hash each was left with,
 * sorted by id (byte order): the leaves of `integrity_root`, and content version 2's
 * `objects`.
 */
export function sortedAffectedObjects(actions: readonly ContentAction[]): ObjectLeaf[] {
  const last = new Map<string, ContentAction>();
  for (const a of actions) if (a.record.object_id !== null) last.set(a.record.object_id, a);
  return sortedById(
    [...last].map(([id, a]) =>
      a.commitment !== undefined
        ? { id, integrity_hash: a.integrityHash, commitment: a.commitment }
        : { id, integrity_hash: a.integrityHash },
    ),
  );
}

/** The header of a batch whose header is written (`hash` set), from its row. */
export function headerOfRow(r: BatchRow): BatchHeader {
  return {
    id: r.id,
    sequence: r.sequence,
    prev_hash: r.prev_hash!,
    prev_integrity_root: r.prev_integrity_root!,
    integrity_root: r.integrity_root!,
    actions_hash: r.actions_hash!,
    commitment: r.commitment!,
    actions_count: r.actions_count,
    total_fee_wei: r.total_fee_wei,
    when_created: r.created_at.toISOString(),
  };
}
