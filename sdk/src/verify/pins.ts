import { verifyCheckpoint, type Checkpoint } from '../log/checkpoint.js';
import { NoteError, parseVerifierKey, type VerifierKey } from '../log/note.js';
import type { PublishedWebauthn } from './public-reads.js';
import type { Source } from './source.js';
import { fail, pass, type BatchRecord, type Verdict } from './types.js';

/**
 * What a verifier knows of the network out of band, from somewhere other than the service it
 * checks (the operator's announcement, a colleague, an earlier run): without it, everything
 * is read from the source being checked, and a dishonest service can serve a whole other
 * network, consistent in itself.
 */
export interface NetworkPins {
  /** The network id (`GET /public/network` → `network`): every action's text names it. */
  network?: string;
  /** The batch key, `0x` + 64 hex (`batch_public_key`): it signs every batch's attestation. */
  batchPublicKey?: string;
  /**
   * The transparency log's verifier key (`log.verifier_key`, signed-note form): the latest
   * checkpoint must verify with it and name a served batch (its `ons-batch` line), which
   * binds that batch and, through `prev_hash`, every batch before it.
   */
  logKey?: string;
}

/** `GET /public/network`, as the verifier reads it (nothing in it is trusted). */
export interface NetworkAnswer {
  network: string;
  batch_public_key: string;
  webauthn?: PublishedWebauthn;
  log?: { verifier_key?: unknown };
}

export const PINNED_ITEM = 'network';

const KEY_RE = /^(?:0x)?[0-9a-fA-F]{64}$/;
const keyOf = (k: string) => k.toLowerCase().replace(/^0x/, '');

/** The pinned log key, parsed; throws on a malformed one (a usage error, not a verdict). */
function pinnedLogKey(text: string): VerifierKey {
  try {
    return parseVerifierKey(text);
  } catch (err) {
    throw new Error(`the pinned log key is not a verifier key: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** Whether two verifier keys are one key (name, algorithm and key bytes). */
function sameKey(a: VerifierKey, b: VerifierKey): boolean {
  return (
    a.name === b.name &&
    a.keyId === b.keyId &&
    a.alg === b.alg &&
    a.publicKey.length === b.publicKey.length &&
    a.publicKey.every((x, i) => x === b.publicKey[i])
  );
}

export interface PinCheck {
  /** The verdict before the batches are read: failed when the network answer breaks a pin. */
  verdict: Verdict;
  /** With a pinned log key: the verdict on the listed sealed batches against its checkpoint. */
  bind(batches: readonly BatchRecord[]): Verdict;
}

/**
 * Checks the network answer against `pins` (null when nothing is pinned). One verdict, item
 * `network`, failed `network`, `batch_public_key`, `log_key` or `log_checkpoint` (the first
 * that fails). With a pinned log key the latest checkpoint is read here, before the batches
 * are listed, so an honest list holds the batch it names.
 */
export async function checkPins(
  source: Source,
  network: NetworkAnswer,
  pins: NetworkPins,
): Promise<PinCheck | null> {
  const { network: id, batchPublicKey, logKey } = pins;
  if (id === undefined && batchPublicKey === undefined && logKey === undefined) return null;
  if (batchPublicKey !== undefined && !KEY_RE.test(batchPublicKey)) {
    throw new Error('the pinned batch public key is not 0x + 64 hex');
  }
  const pinnedLog = logKey === undefined ? null : pinnedLogKey(logKey);
  const failed = (check: string, reason: string): PinCheck => {
    const verdict = fail(PINNED_ITEM, check, reason);
    return { verdict, bind: () => verdict };
  };
  if (id !== undefined && network.network !== id) {
    return failed(
      'network',
      `the service is network ${JSON.stringify(network.network)}, not ${JSON.stringify(id)}`,
    );
  }
  if (
    batchPublicKey !== undefined &&
    (typeof network.batch_public_key !== 'string' ||
      keyOf(network.batch_public_key) !== keyOf(batchPublicKey))
  ) {
    return failed(
      'batch_public_key',
      `the service publishes batch key ${String(network.batch_public_key)}, not ${batchPublicKey}`,
    );
  }
  if (pinnedLog === null) {
    const verdict = pass(PINNED_ITEM);
    return { verdict, bind: () => verdict };
  }
  const published = network.log?.verifier_key;
  let publishedKey: VerifierKey | null = null;
  try {
    publishedKey = typeof published === 'string' ? parseVerifierKey(published) : null;
  } catch (err) {
    if (!(err instanceof NoteError)) throw err;
  }
  if (publishedKey === null || !sameKey(publishedKey, pinnedLog)) {
    return failed(
      'log_key',
      `the service publishes log key ${typeof published === 'string' ? published : 'none'}, not ${pinnedLog.text}`,
    );
  }
  const text = await source.bytes('/log/checkpoint');
  let checkpoint: Checkpoint | null = null;
  if (text !== null) {
    const checked = await verifyCheckpoint(new TextDecoder().decode(text), { logKey: pinnedLog });
    if (!checked.ok || checked.checkpoint === null) {
      return failed('log_checkpoint', `the latest checkpoint: ${checked.errors.join('; ')}`);
    }
    checkpoint = checked.checkpoint;
  }
  return {
    verdict: pass(PINNED_ITEM),
    bind(batches) {
      if (checkpoint === null) {
        // An empty log: fine while no batch is sealed. A service that logs (it publishes the
        // pinned key) appends each sealed batch within seconds, so one that hides its
        // checkpoint while serving sealed batches fails, whatever their log_tree_size says.
        const sealed = batches.filter((b) => b.hash !== '').length;
        return sealed === 0
          ? pass(PINNED_ITEM)
          : fail(
              PINNED_ITEM,
              'log_checkpoint',
              `no checkpoint served, though ${sealed} batches are sealed`,
            );
      }
      const named = checkpoint.batch;
      if (named === null) {
        return fail(PINNED_ITEM, 'log_checkpoint', 'the latest checkpoint names no batch');
      }
      const batch = batches.find((b) => b.sequence === named.sequence);
      if (batch === undefined) {
        return fail(
          PINNED_ITEM,
          'log_checkpoint',
          `the latest checkpoint names batch ${named.sequence}, which is not listed`,
        );
      }
      if (batch.hash !== named.hash || batch.log_tree_size !== checkpoint.size) {
        return fail(
          PINNED_ITEM,
          'log_checkpoint',
          `the latest checkpoint names batch ${named.sequence} ${named.hash} at tree size ` +
            `${checkpoint.size}; the service serves ${batch.hash} at ${String(batch.log_tree_size)}`,
        );
      }
      return pass(PINNED_ITEM);
    },
  };
}
