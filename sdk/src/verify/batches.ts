import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { canonicalJson } from '../actions/canonical-json.js';
import { verifyActionSignature, type ActionContext } from './actions.js';
import { privateCommitmentOf } from './commitment.js';
import { buf, concat, hashBytes, hex, hexBytes, sha256, utf8 } from './bytes.js';
import { verifyActionInclusion } from './inclusion.js';
import { merkleRoot, type InclusionProof } from './merkle.js';
import {
  fail,
  pass,
  type ActionRecord,
  type BatchRecord,
  type PrivateActionRecord,
  type Verdict,
} from './types.js';

/** The first batch's `prev_hash` and `prev_integrity_root`. */
export const GENESIS = `0x${'0'.repeat(64)}`;

/** The ten header fields `hash` covers (docs/batches.md). */
export const HEADER_FIELDS = [
  'id',
  'sequence',
  'prev_hash',
  'prev_integrity_root',
  'integrity_root',
  'actions_hash',
  'commitment',
  'actions_count',
  'total_fee_wei',
  'when_created',
] as const;

type Header = Pick<BatchRecord, (typeof HEADER_FIELDS)[number]>;

const headerOf = (b: Header): Header =>
  Object.fromEntries(HEADER_FIELDS.map((f) => [f, b[f]])) as unknown as Header;

/** `hash` = H(RFC 8785 JSON of the header). */
export const headerHash = (b: Header): string => hex(sha256(utf8(canonicalJson(headerOf(b)))));

/** `commitment` = H(prev_integrity_root ‖ integrity_root ‖ actions_hash ‖ sequence u64 BE). */
export function commitmentOf(b: Header): string | null {
  const parts = [b.prev_integrity_root, b.integrity_root, b.actions_hash].map(hashBytes);
  if (parts.some((p) => p === null)) return null;
  const seq = new Uint8Array(8);
  new DataView(seq.buffer).setBigUint64(0, BigInt(b.sequence));
  return hex(sha256(...(parts as Uint8Array[]), seq));
}

/** An `integrity_root` leaf: UTF-8(object id) ‖ 0x00 ‖ its integrity hash (32 bytes). */
function integrityLeaf(id: string, integrityHash: string): Uint8Array | null {
  const h = hashBytes(integrityHash);
  return h && concat(utf8(id), Uint8Array.of(0), h);
}

/** Byte order of UTF-8. */
function compareUtf8(a: string, b: string): number {
  const x = utf8(a);
  const y = utf8(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

/** `integrity_root` over `(id, integrity_hash)` of the affected objects, sorted by id bytes. */
export function integrityRootOf(objects: { id: string; integrity_hash: string }[]): string | null {
  const leaves = [...objects]
    .sort((a, b) => compareUtf8(a.id, b.id))
    .map((o) => integrityLeaf(o.id, o.integrity_hash));
  return leaves.some((l) => l === null) ? null : merkleRoot(leaves as Uint8Array[]);
}

export { privateCommitmentOf } from './commitment.js';

/** What {@link verifyPrivateAction} checks besides the record and its batch. */
export interface PrivateActionChecks {
  /**
   * The network and its published keys (`publicActionContext(source, network)`): the action's
   * text is rebuilt from the record, its `hash` must be SHA-256 of it and its signature the
   * wallet's (as {@link verifyActionSignature} checks a public action). Without it neither is
   * checked and both are reported skipped (`hash`, `signature`): the commitment then opens to
   * the record's `hash` as given, which nothing ties to its params.
   */
  context?: ActionContext;
  /**
   * The action's public inclusion proof (`GET /batches/{batchId}/proofs/{actionId}`): it must
   * start from the record's `leaf` and lead to the batch's `actions_hash` (as
   * {@link verifyActionInclusion} checks it). Without it `proof` is reported skipped.
   */
  proof?: InclusionProof & { salt?: string };
}

/**
 * Checks what a member fetched of its own action (`GET /batches/{batchId}/private-actions/
 * {actionId}`), in this order (the first that fails is named): the record names this batch
 * (`batch_id`) and its content version (`version`); with `checks.context`, the action's hash
 * is SHA-256 of the text rebuilt from the record and its signature is the wallet's (the
 * failure {@link verifyActionSignature} names: `text`, `hash`, `signature`, `credential`,
 * `challenge`); the leaf is what the batch sealed: for an action sealed private in content
 * version 4 the commitment rebuilt from the salt, that hash and the integrity hash
 * (`commitment`), otherwise the action's hash with no salt or commitment (`leaf`); with
 * `checks.proof`, the inclusion proof starts from that leaf and leads to `actions_hash`
 * (`root`, `leaf_hash`, `tree_size`, `audit_path`). What the given data cannot check is listed
 * in `skipped`: `hash` and `signature` without a context, `proof` without a proof, and always
 * `integrity_hash` (the object's integrity hash the action left is taken as given: checking
 * it takes the object's history replayed, `verifyObjectChain`).
 */
export async function verifyPrivateAction(
  record: PrivateActionRecord,
  batch: Pick<BatchRecord, 'id' | 'version' | 'actions_hash' | 'actions_count'>,
  checks: PrivateActionChecks = {},
): Promise<Verdict> {
  const action = record.action;
  const item = `private action ${action.id} in ${batch.id}`;
  const skipped: string[] = [];
  if (action.batch_id !== batch.id) {
    return fail(item, 'batch_id', `the record names batch ${String(action.batch_id)}`);
  }
  if (record.version !== batch.version) {
    return fail(
      item,
      'version',
      `the record says content version ${record.version}, the batch ${batch.version}`,
    );
  }
  if (checks.context) {
    const signed = await verifyActionSignature(action, checks.context);
    if (!signed.ok) return fail(item, signed.failed!, signed.reason!);
  } else {
    skipped.push('hash', 'signature');
  }
  if (batch.version >= 4 && record.private) {
    const expected =
      record.salt === null
        ? null
        : privateCommitmentOf(record.salt, action.hash, record.integrity_hash);
    if (expected === null || expected !== record.commitment || record.leaf !== expected) {
      return fail(item, 'commitment', 'the commitment does not open to the action with its salt');
    }
  } else if (record.salt !== null || record.commitment !== null) {
    return fail(item, 'commitment', 'a salt or commitment for an action not sealed private');
  } else if (record.leaf !== action.hash) {
    return fail(item, 'leaf', "the leaf is not the action's hash");
  }
  if (checks.proof) {
    // The proof of an action whose object is public now carries its salt: it must be the
    // record's; the leaf is checked as the record states it (the commitment itself).
    const { salt: served, ...asSealed } = checks.proof;
    if (served !== undefined && served !== record.salt) {
      return fail(item, 'salt', "the proof's salt is not the record's");
    }
    const included = verifyActionInclusion({ id: action.id, hash: record.leaf }, asSealed, batch);
    if (!included.ok) return fail(item, included.failed!, included.reason!);
  } else {
    skipped.push('proof');
  }
  skipped.push('integrity_hash');
  return pass(item, skipped);
}

/** `ipfs://` + CIDv1 (raw, sha2-256, base32) of the content bytes. */
export function ipfsUrlOf(content: Uint8Array): string {
  return `ipfs://${CID.createV1(0x55, Digest.create(0x12, sha256(content))).toString()}`;
}

/** What checking a batch needs besides its explorer record and content bytes. */
export interface BatchContext {
  /** `GET /public/network` → `batch_public_key`. */
  batchPublicKey: string;
  /** The previous batch (sequence - 1) as checked; null for the first. */
  previous: BatchRecord | null;
  /**
   * The integrity hash each action left, from replayed object chains (public objects).
   * Content version 2 carries every action's and object's integrity hash: `integrity_root`
   * is recomputed from the content, and these are cross-checked against it. Version 1 does
   * not: `integrity_root` is recomputed only when every affected object's last action in the
   * batch is known here, else that check is `skipped`.
   */
  integrityByAction?: ReadonlyMap<string, string>;
  /**
   * The lowest content version this batch may have: {@link versionFloorAfter} over the
   * earlier batches of the chain. Default: from `previous` alone.
   */
  versionFloor?: number;
  /**
   * The public histories the verifier read, by object id, each oldest first (as
   * `GET /public/objects/{id}/history?order=asc` lists it). For each of these objects, its
   * actions in the content must be exactly its history's actions naming this batch: the same
   * ids in the same order with the same hashes, none missing, none extra, and none sealed as a
   * commitment in content version 4 (the public cannot open one, so it would stand in the
   * object's `integrity_root` leaf unchecked; a private record that keeps its `hash` is checked
   * by it, as a public one is); and from content version
   * 2 its `integrity_root` leaf must be the integrity hash `integrityByAction` gives the last
   * of them (`history`). Objects not in it are not checked so.
   */
  histories?: ReadonlyMap<string, readonly HistoryAction[]>;
  /**
   * The salts the inclusion proofs served for actions this batch sealed private whose objects
   * are public now, by action id. Such an action of a public history may be private in the
   * content when its commitment is the one its salt, its history's hash and the integrity hash
   * `integrityByAction` gives it make; its object's leaf is then that commitment.
   */
  openings?: ReadonlyMap<string, string>;
}

/** What the `history` check reads of a public history's action. */
export type HistoryAction = Pick<ActionRecord, 'id' | 'hash' | 'batch_id'>;

/**
 * The lowest content version the batches after one of version `version` may have, given the
 * floor before it: content versions only go up along the chain (1 before migration 0020, 2
 * until 0021, 4 after), except version 3, a re-published batch of version 1 or 2, which
 * may sit among them and raises nothing. So a batch served as version 1 (no signed action
 * records, no objects) after one of version 2 or 4 is a downgrade.
 */
export const versionFloorAfter = (floor: number, version: number): number =>
  version === 3 ? floor : Math.max(floor, version);

interface ContentAction {
  id: string;
  /** Absent from an action sealed private in content version 4. */
  hash?: string;
  object_id: string | null;
  /** A decimal integer string (checked: the content is the service's to write). */
  fee_wei: unknown;
  batch_id: string | null;
  /** Content version 2 and later (absent from an action sealed private in version 4). */
  integrity_hash?: string;
  /** Content versions 3 and 4: an action on a private object (docs/batches.md). */
  private?: boolean;
  /**
   * Content version 4, an action sealed private: its salted commitment, its `actions_hash`
   * leaf. A private record of version 4 without one is an action sealed public whose object
   * was made private since: version 3's record (`hash`, `integrity_hash`), whose leaf stays
   * its action hash (docs/batches.md, "An object made private later").
   */
  commitment?: string;
}

interface ContentObject {
  id: string;
  integrity_hash?: string;
  /** Content version 4, a private object: its last action's commitment. */
  commitment?: string;
}

interface Content {
  version?: unknown;
  batch: Record<string, unknown>;
  actions: ContentAction[];
  /** Content version 2 and later: the `integrity_root` leaves, sorted by id. */
  objects?: ContentObject[];
}

/** An amount in wei as the service writes it: a non-negative decimal integer, no leading zero. */
const FEE_WEI = /^(?:0|[1-9][0-9]*)$/;

/** The content versions this verifier reads (docs/batches.md). */
export const CONTENT_VERSIONS = [1, 2, 3, 4];

/**
 * An action its batch sealed as a salted commitment: a private record of content version 4
 * that carries a `commitment`. A private record of version 4 that carries none is version 3's
 * (an action sealed public whose object was made private since): its leaf is its hash.
 */
const sealedAsCommitment = (version: number, a: ContentAction): boolean =>
  version >= 4 && a.private === true && a.commitment !== undefined;

/**
 * The data of an action's `actions_hash` leaf: the salted commitment of an action sealed as
 * one, else its action hash (undefined when the content lacks it).
 */
const leafOf = (version: number, a: ContentAction): string | undefined =>
  sealedAsCommitment(version, a) ? a.commitment : a.hash;

/** The value of an action's object leaf (after the id): as {@link leafOf}, the integrity hash. */
const objectValueOf = (version: number, a: ContentAction): string | undefined =>
  sealedAsCommitment(version, a) ? a.commitment : a.integrity_hash;

/** The value of a listed object's `integrity_root` leaf. */
const listedValueOf = (version: number, o: ContentObject): string | undefined =>
  version >= 4 && o.commitment !== undefined ? o.commitment : o.integrity_hash;

/**
 * The `integrity_root` checks of content version 2, in this order: `integrity_root` is the
 * tree over the content's `objects`; `objects` are exactly the affected objects, each with
 * the integrity hash its last action in the batch left; and every action whose integrity
 * hash a replayed chain knows (`known`) left that hash (`integrity_hash`).
 */
function checkIntegrityV2(
  item: string,
  batch: BatchRecord,
  content: Content,
  known: ReadonlyMap<string, string> | undefined,
): Verdict | null {
  const objects = content.objects;
  const v = batch.version;
  if (!Array.isArray(objects)) return fail(item, 'objects', 'the content lists no objects');
  const leaves = objects.map((o) => ({ id: o.id, integrity_hash: listedValueOf(v, o) ?? '' }));
  if (integrityRootOf(leaves) !== batch.integrity_root) {
    return fail(
      item,
      'integrity_root',
      "integrity_root is not the tree over the content's objects",
    );
  }
  const last = new Map<string, string | undefined>();
  for (const a of content.actions)
    if (a.object_id !== null) last.set(a.object_id, objectValueOf(v, a));
  const listed = new Map(leaves.map((o) => [o.id, o.integrity_hash]));
  if (
    listed.size !== objects.length ||
    listed.size !== last.size ||
    [...last].some(([id, h]) => h === undefined || listed.get(id) !== h)
  ) {
    return fail(
      item,
      'objects',
      "the content's objects are not the integrity hashes its actions left",
    );
  }
  for (const a of content.actions) {
    const replayed = known?.get(a.id);
    if (replayed !== undefined && !sealedAsCommitment(v, a) && replayed !== a.integrity_hash) {
      return fail(
        item,
        'integrity_hash',
        `action ${a.id} left ${replayed} on object ${String(a.object_id)} (replayed), not the content's ${String(a.integrity_hash)}`,
      );
    }
  }
  return null;
}

/** The commitment an opened action's salt makes of its history (null when it cannot). */
function openedCommitment(ctx: BatchContext, action: HistoryAction): string | null {
  const salt = ctx.openings?.get(action.id);
  const integrity = ctx.integrityByAction?.get(action.id);
  if (salt === undefined || integrity === undefined) return null;
  return privateCommitmentOf(salt, action.hash, integrity);
}

/**
 * The `history` check ({@link BatchContext.histories}): each public object whose history was
 * read has in the content exactly its history's actions of this batch, in order, none sealed
 * as a commitment in version 4 unless its proof's salt opens it, and (version 2 on) the
 * `integrity_root` leaf its history reaches at the last of them. The leaf is checked by value
 * as `integrity_root` was recomputed over it: an object's leaf is its entry under `objects`,
 * whose value is its last action's integrity hash (or, in version 4, the commitment of a last
 * action sealed as one).
 */
function checkHistories(
  item: string,
  batch: BatchRecord,
  content: Content,
  ctx: BatchContext,
): Verdict | null {
  const histories = ctx.histories;
  if (histories === undefined || histories.size === 0) return null;
  const v = batch.version;
  const inContent = new Map<string, ContentAction[]>();
  for (const a of content.actions) {
    if (a.object_id === null || !histories.has(a.object_id)) continue;
    const list = inContent.get(a.object_id);
    if (list) list.push(a);
    else inContent.set(a.object_id, [a]);
  }
  const bad = (reason: string) => fail(item, 'history', reason);
  for (const [objectId, history] of histories) {
    const expected = history.filter((a) => a.batch_id === batch.id);
    const got = inContent.get(objectId) ?? [];
    for (let i = 0; i < Math.max(expected.length, got.length); i++) {
      const e = expected[i];
      const g = got[i];
      if (g === undefined) {
        return bad(
          `action ${e!.id} of public object ${objectId} names this batch, not in its content`,
        );
      }
      if (e === undefined || g.id !== e.id) {
        return bad(
          `the content's action ${g.id} on public object ${objectId} is not its history's ${e ? `action ${e.id}` : 'in this batch'}`,
        );
      }
      if (sealedAsCommitment(v, g)) {
        if (openedCommitment(ctx, e) !== g.commitment) {
          return bad(`the content seals action ${g.id} of public object ${objectId} as private`);
        }
        continue;
      }
      if (g.hash !== e.hash) {
        return bad(`the content's action ${g.id} has another hash than its public history's`);
      }
    }
    const last = expected.at(-1);
    const lastGot = got.at(-1);
    const sealedLast = last && lastGot !== undefined && sealedAsCommitment(v, lastGot);
    const reached =
      last && (sealedLast ? openedCommitment(ctx, last) : ctx.integrityByAction?.get(last.id));
    if (v < 2 || reached === undefined || reached === null) continue;
    const leaf = content.objects?.find((o) => o.id === objectId);
    if (leaf === undefined || listedValueOf(v, leaf) !== reached) {
      return bad(
        `public object ${objectId}'s integrity_root leaf is not the integrity hash its history reaches (${reached})`,
      );
    }
  }
  return null;
}

/**
 * (c) Checks a sealed batch against its content (`GET /batches/{id}/content`, bytes as
 * served), in this order (the first that fails is named): the bytes are strict UTF-8 and
 * RFC 8785 (`content`); the content's header is the explorer's (each field by name, then
 * `version`, which may not drop below an earlier batch's: `ctx.versionFloor`); `ipfs_url` is
 * the content's CID;
 * `actions_count`, `actions` (each names this batch), `actions_hash`, each action's `fee_wei` (a
 * decimal integer string: digits, no sign, no leading zero) and `total_fee_wei` come from its
 * actions; `integrity_root` (see {@link checkIntegrityV2} for content version 2; for
 * version 1 only when `ctx.integrityByAction` knows every affected object); each public object
 * of `ctx.histories` has there exactly its history's actions of this batch and the leaf its
 * history reaches (`history`, {@link BatchContext.histories}); `commitment` and `hash` from
 * their formulas; the chain (`sequence`, `prev_hash`, `prev_integrity_root`) from
 * the previous batch; and the Ed25519 attestation (`proof`, `proof_id`) from
 * `batch_public_key`.
 */
export async function verifyBatch(
  batch: BatchRecord,
  content: Uint8Array,
  ctx: BatchContext,
): Promise<Verdict> {
  const item = `batch ${batch.sequence} ${batch.id}`;
  let parsed: Content;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content);
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    return fail(item, 'content', 'the content is not UTF-8 JSON');
  }
  // RFC 8785: one byte string per value (no duplicate keys, whitespace or other key order),
  // so every reader of these bytes reads the same content.
  let canonical: string | null;
  try {
    canonical = canonicalJson(parsed);
  } catch {
    canonical = null;
  }
  if (canonical !== text) {
    return fail(item, 'content', 'the content is not RFC 8785 JSON');
  }
  for (const f of [...HEADER_FIELDS, 'hash'] as const) {
    if (canonicalJson(parsed.batch?.[f]) !== canonicalJson(batch[f])) {
      return fail(item, f, `the content's ${f} is not the explorer's`);
    }
  }
  // Version 1 content has no `version` field; every later one names its version.
  const contentVersion = canonicalJson(parsed.version ?? 1);
  if (contentVersion !== String(batch.version) || !CONTENT_VERSIONS.includes(batch.version)) {
    return fail(
      item,
      'version',
      `content version ${contentVersion}, batch version ${batch.version}: not one this verifier reads`,
    );
  }
  const floor = ctx.versionFloor ?? (ctx.previous ? versionFloorAfter(1, ctx.previous.version) : 1);
  if (batch.version !== 3 && batch.version < floor) {
    return fail(
      item,
      'version',
      `content version ${batch.version} after a batch of version ${floor}: versions only go up (3 aside)`,
    );
  }
  if (ipfsUrlOf(content) !== batch.ipfs_url) {
    return fail(item, 'ipfs_url', 'ipfs_url is not the CID of the content');
  }
  const actions = parsed.actions;
  if (!Array.isArray(actions) || actions.length !== batch.actions_count) {
    return fail(item, 'actions_count', 'actions_count is not the number of its actions');
  }
  if (actions.some((a) => a.batch_id !== batch.id)) {
    return fail(item, 'actions', 'an action of the content names another batch');
  }
  const leaves = actions.map((a) => hashBytes(leafOf(batch.version, a) ?? ''));
  if (leaves.some((l) => l === null) || merkleRoot(leaves as Uint8Array[]) !== batch.actions_hash) {
    return fail(
      item,
      'actions_hash',
      'actions_hash is not the tree over its action hashes (private actions: commitments)',
    );
  }
  let fee = 0n;
  for (const a of actions) {
    // One text per amount, as the service writes it: BigInt alone would also read "010",
    // "+10", " 10" or "0x0a", and throw on "1e1".
    if (typeof a.fee_wei !== 'string' || !FEE_WEI.test(a.fee_wei)) {
      return fail(
        item,
        'fee_wei',
        `action ${String(a.id)}'s fee_wei ${JSON.stringify(a.fee_wei)} is not a decimal integer (digits, no sign, no leading zero)`,
      );
    }
    fee += BigInt(a.fee_wei);
  }
  if (fee.toString() !== batch.total_fee_wei) {
    return fail(item, 'total_fee_wei', 'total_fee_wei is not the sum of its fees');
  }
  const skipped: string[] = [];
  const known = ctx.integrityByAction;
  const last = new Map<string, string | undefined>();
  for (const a of actions) if (a.object_id !== null) last.set(a.object_id, known?.get(a.id));
  if (batch.version >= 2) {
    const failed = checkIntegrityV2(item, batch, parsed, known);
    if (failed) return failed;
  } else if ([...last.values()].every((h) => h !== undefined)) {
    const root = integrityRootOf([...last].map(([id, h]) => ({ id, integrity_hash: h! })));
    if (root !== batch.integrity_root) {
      return fail(item, 'integrity_root', 'integrity_root is not the tree over its objects');
    }
  } else {
    skipped.push('integrity_root');
  }
  const history = checkHistories(item, batch, parsed, ctx);
  if (history) return history;
  if (commitmentOf(batch) !== batch.commitment) {
    return fail(
      item,
      'commitment',
      'commitment is not H(prev_integrity_root ‖ integrity_root ‖ actions_hash ‖ sequence)',
    );
  }
  if (headerHash(batch) !== batch.hash) return fail(item, 'hash', 'hash is not H(header)');
  const prev = ctx.previous;
  const expected = prev
    ? {
        sequence: prev.sequence + 1,
        prev_hash: prev.hash,
        prev_integrity_root: prev.integrity_root,
      }
    : { sequence: 1, prev_hash: GENESIS, prev_integrity_root: GENESIS };
  for (const f of ['sequence', 'prev_hash', 'prev_integrity_root'] as const) {
    if (batch[f] !== expected[f]) return fail(item, f, `${f} does not chain to the previous batch`);
  }
  return (await checkAttestation(item, batch, ctx.batchPublicKey)) ?? pass(item, skipped);
}

/** The Ed25519 attestation: a failed verdict, or null when it holds. */
async function checkAttestation(
  item: string,
  batch: BatchRecord,
  batchPublicKey: string,
): Promise<Verdict | null> {
  const proof = batch.proof;
  if (!proof || proof.type !== 'ed25519-attestation') {
    return fail(item, 'proof', 'no ed25519-attestation proof');
  }
  if (proof.public_values !== batch.commitment) {
    return fail(item, 'proof', 'the proof attests another commitment');
  }
  if (proof.vkey !== batchPublicKey) {
    return fail(item, 'proof', "the proof's vkey is not the network's batch_public_key");
  }
  const key = hexBytes(batchPublicKey);
  const sig = hexBytes(proof.value);
  const msg = hashBytes(batch.commitment);
  if (!key || key.length !== 32 || !sig || sig.length !== 64 || !msg) {
    return fail(item, 'proof', 'malformed key or signature');
  }
  const subtle = globalThis.crypto.subtle;
  const valid = await subtle
    .importKey('raw', buf(key), { name: 'Ed25519' }, false, ['verify'])
    .then((k) => subtle.verify({ name: 'Ed25519' }, k, buf(sig), buf(msg)))
    .catch(() => false);
  if (!valid) return fail(item, 'proof', 'the Ed25519 attestation does not verify');
  const proofId = hex(sha256(utf8('ed25519-attestation'), Uint8Array.of(0), sig));
  if (proofId !== batch.proof_id)
    return fail(item, 'proof_id', 'proof_id is not H(type ‖ 0x00 ‖ signature)');
  return null;
}
