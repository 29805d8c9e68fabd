import type { Db, Executor } from '../../db/pool.js';
import { batchActions } from '../ebus/index.js';
import {
  actionLeaf,
  contentBytes,
  headerOfRow,
  leafValue,
  sealPrivate,
  sortedAffectedObjects,
  type ContentAction,
} from './content.js';
import { actionsHash, integrityRoot, ipfsUrl } from './formulas.js';
import * as repo from './repo/batches.js';

/**
 * A sealed batch as the public sees it now (docs/batches.md, "An object made private later"):
 * its header froze which actions it sealed private (`private_actions`), and an action it
 * sealed public whose object is private now is shown as private too — in its content as
 * version 3's private record (its action hash and the integrity hash it left: what the header
 * committed to and what a verifier needs to recompute the roots), in `affected_actions` with
 * no name. The header, proof, chain, anchor and log never change; the content does, and with
 * it `ipfs_url` (which nothing signed names). `hidden_actions` says which actions the
 * published content (`ipfs_url`) shows so; every anonymous read compares it with the objects'
 * visibility of the moment.
 */

/** A batch whose content exists: header written, not waiting to be re-published as version 3. */
export const isPublished = (r: repo.BatchRow): boolean =>
  r.hash !== null && r.ipfs_url !== null && r.private_actions !== null && !r.republish;

/**
 * The actions a batch sealed public among those private now (`privateNow`, in execution
 * order): what its public answers show as private beyond what its header sealed.
 */
export function hiddenOf(row: repo.BatchRow, privateNow: readonly string[]): string[] {
  const sealed = new Set(row.private_actions ?? []);
  return privateNow.filter((id) => !sealed.has(id));
}

/** The same ids in the same order. */
export const sameIds = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * The content version a batch of `version` is shown in with `hidden`: a batch of version 1 or
 * 2 has no private record, so one hiding an action is re-published as version 3 (and stays
 * so); versions 3 and 4 keep theirs.
 */
export const viewVersion = (version: number, hidden: readonly string[]): number =>
  version < 3 && hidden.length > 0 ? 3 : version;

/** The batch's actions as shown with `hidden`, the private ones' commitments filled in. */
async function viewActions(
  db: Executor,
  row: repo.BatchRow,
  hidden: readonly string[],
  version: number,
  saltKey: Uint8Array,
): Promise<ContentAction[]> {
  const sealed = new Set(row.private_actions ?? []);
  const hide = new Set(hidden);
  const actions = (await batchActions(db, row.id)).map((a) => {
    const id = a.record.id;
    const hiddenNow = hide.has(id) && !sealed.has(id);
    return { ...a, private: sealed.has(id) || hiddenNow, hidden: hiddenNow };
  });
  return sealPrivate(version, actions, saltKey);
}

/** The content bytes of a published batch shown with `hidden`, in content `version`. */
export async function viewBytes(
  db: Executor,
  row: repo.BatchRow,
  hidden: readonly string[],
  version: number,
  saltKey: Uint8Array,
): Promise<Buffer> {
  const actions = await viewActions(db, row, hidden, version, saltKey);
  return contentBytes(version, headerOfRow(row), row.hash!, actions);
}

/** Whether actions make the batch's signed roots (their leaves as its header hashed them). */
function makeRoots(row: repo.BatchRow, actions: readonly ContentAction[]): boolean {
  const objects = sortedAffectedObjects(actions).map((o) => ({
    id: o.id,
    integrity_hash: leafValue(o),
  }));
  return (
    actionsHash(actions.map(actionLeaf)) === row.actions_hash &&
    integrityRoot(objects, true) === row.integrity_root
  );
}

/** What {@link publishView} did. */
export interface PublishedView {
  bytes: Buffer;
  ipfsUrl: string;
  version: number;
  /** False when the batch's content changed meanwhile (another process published a view). */
  saved: boolean;
}

/**
 * Publishes a batch's content anew showing `hidden` as private: builds it from the action
 * rows, checks that they still make the batch's signed roots (null when they do not: a row
 * changed since the seal, nothing is published), and records its CID as `ipfs_url` (the former
 * joins `superseded_ipfs_urls`).
 */
export async function publishView(
  db: Db,
  row: repo.BatchRow,
  hidden: string[],
  saltKey: Uint8Array,
  now: Date,
): Promise<PublishedView | null> {
  const version = viewVersion(row.version, hidden);
  const actions = await viewActions(db, row, hidden, version, saltKey);
  if (!makeRoots(row, actions)) return null;
  const bytes = contentBytes(version, headerOfRow(row), row.hash!, actions);
  const url = ipfsUrl(bytes);
  const saved = await repo.saveView(db, row.id, {
    version,
    ipfsUrl: url,
    formerIpfsUrl: row.ipfs_url!,
    hidden,
    now,
  });
  return { bytes, ipfsUrl: url, version, saved };
}
