import { createHash } from 'node:crypto';
import type { KeyId } from './repo.js';

/**
 * The channel on which a first request's end is announced: migration 0044's triggers send on
 * it from the transaction that records its answer or gives its key back, so PostgreSQL
 * delivers the notice when, and only if, that transaction commits.
 */
export const IDEMPOTENCY_CHANNEL = 'ons_idempotency';

/**
 * What a notice on `ons_idempotency` says of a stored key (`storedId`'s: its key is already
 * the SHA-256 of the client's): the SHA-256 of scope, route and key, as migration 0044's
 * trigger computes it. It tells which key ended without telling the key, its organization or
 * its credential.
 */
export function noticeOf(stored: KeyId): string {
  return createHash('sha256')
    .update(`${stored.scope}\n${stored.route}\n${stored.key}`, 'utf8')
    .digest('hex');
}

/** What src/notices.ts tells the retries of this process that wait on another's requests. */
export interface IdempotencyNotices {
  /** A notice on `ons_idempotency`: the retries waiting on that key read it again. */
  heard(payload: string): void;
  /** Notices may have been missed: every waiting retry reads its key again, once. */
  wakeAll(): void;
}

/** A retry's wait for a notice on its key: `woken` resolves at the first one (or a gap). */
export interface Watch {
  readonly woken: Promise<void>;
  /** The retry no longer waits: forgotten. */
  stop(): void;
}

/**
 * The retries of this process waiting for a first request of another process, by the notice
 * that ends their wait. A retry watches before it reads the key, so a notice sent between its
 * read and its wait is not lost. Nothing is kept once no retry waits.
 */
export class WaitingRetries implements IdempotencyNotices {
  private readonly waiting = new Map<string, Set<() => void>>();

  watch(notice: string): Watch {
    let wake = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let set = this.waiting.get(notice);
    if (!set) this.waiting.set(notice, (set = new Set()));
    set.add(wake);
    return {
      woken,
      stop: () => {
        const now = this.waiting.get(notice);
        if (!now?.delete(wake) || now.size > 0) return;
        this.waiting.delete(notice);
      },
    };
  }

  heard(payload: string): void {
    const set = this.waiting.get(payload);
    if (!set) return;
    this.waiting.delete(payload);
    for (const wake of set) wake();
  }

  wakeAll(): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const set of all) for (const wake of set) wake();
  }
}
