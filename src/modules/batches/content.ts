import { createHash } from 'node:crypto';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { ActionLogRecord } from '../ebus/index.js';
import { affectedObjects, type BatchHeader } from './formulas.js';
import type { BatchRow } from './repo/batches.js';

/**
 * The fields of an action log record as batch content carries it (design.md §6), in RFC 8785
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
const KEY_TEXT = new Map<string, string>(V2_KEYS.map((k) => [k, `${JSON.stringify(k)}:`]));

/** RFC 8785 text of one action's content record (a member whose value is undefined is left out). */
function recordJson(keys: readonly ContentKey[], a: ContentAction): string {
  let out = '{';
  for (const k of keys) {
    const v = k === 'integrity_hash' ? a.integrityHash : a.record[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${KEY_TEXT.get(k)!}${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** A batch's action as logged, with the integrity hash it left (`batchActions`). */
export interface ContentAction {
  record: ActionLogRecord;
  integrityHash: string;
}

/**
 * The content of a batch (what `ipfs_url` names and `GET /batches/{id}/content` serves), in
 * the batch's content `version`, as the pieces of its text in order:
 * - 1: RFC 8785 JSON of `{batch, actions}`, the actions with the {@link V1_KEYS} fields;
 * - 2: RFC 8785 JSON of `{version: 2, batch, actions, objects}`, the actions with the
 *   {@link V2_KEYS} fields and `objects` the affected objects' `{id,
 *   integrity_hash}` after the batch sorted by id (byte order): the leaves of `integrity_root`.
 * RFC 8785 writes an object's members in key order ("actions" < "batch" < "objects" <
 * "version") and an array's elements joined by commas, so the pieces joined are exactly the
 * RFC 8785 text of the whole (content.test.ts checks it against `canonicalJson`).
 */
function* contentParts(
  version: number,
  header: BatchHeader,
  hash: string,
  actions: readonly ContentAction[],
): Generator<string> {
  if (version !== 1 && version !== 2) throw new Error(`unknown batch content version ${version}`);
  yield '{"actions":[';
  const keys = version === 1 ? V1_KEYS : V2_KEYS;
  for (let i = 0; i < actions.length; i++) {
    const text = recordJson(keys, actions[i]!);
    yield i === 0 ? text : `,${text}`;
  }
  yield `],"batch":${canonicalJson({ ...header, hash })}`;
  if (version === 2) {
    // Sorted by the ids' UTF-8 bytes, each id turned into bytes once.
    const objects = affectedObjects(
      actions.map((a) => ({ object_id: a.record.object_id, integrity_hash: a.integrityHash })),
    )
      .map((o) => ({ o, key: Buffer.from(o.id, 'utf8') }))
      .sort((a, b) => Buffer.compare(a.key, b.key))
      .map(({ o }) => o);
    yield `,"objects":${canonicalJson(objects)},"version":2`;
  }
  yield '}';
}

/** The content bytes of a batch (see contentParts). */
export function contentBytes(
  version: number,
  header: BatchHeader,
  hash: string,
  actions: readonly ContentAction[],
): Buffer {
  return Buffer.from([...contentParts(version, header, hash, actions)].join(''), 'utf8');
}

/** Actions serialized between two turns given to the event loop by {@link contentDigest}. */
const ACTIONS_PER_TURN = 64;

/**
 * SHA-256 of {@link contentBytes}, hashed piece by piece, without the megabyte of text
 * (1,000 actions) that the bytes are. Headers are computed on their own thread
 * (header-pool.ts); when that thread is unavailable they run on the event loop, which this
 * gives a turn after every {@link ACTIONS_PER_TURN} actions.
 */
export async function contentDigest(
  version: number,
  header: BatchHeader,
  hash: string,
  actions: readonly ContentAction[],
): Promise<Buffer> {
  const digest = createHash('sha256');
  let n = 0;
  for (const part of contentParts(version, header, hash, actions)) {
    digest.update(part, 'utf8');
    if (++n % ACTIONS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return digest.digest();
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
