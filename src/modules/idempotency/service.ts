import type { Executor } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, Code, invalid } from '../../lib/errors.js';
import { claimKey, completeKey, findKey, releaseKey, touchKey, type KeyId } from './repo.js';
import { open, seal, storedId } from './sealing.js';
import { noticeOf, WaitingRetries, type IdempotencyNotices } from './waiting.js';

export type { KeyId } from './repo.js';

/** The answer kept for a key: what a retry with the same request is answered. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type Begun = { kind: 'run' } | { kind: 'replay'; answer: StoredAnswer };

export interface IdempotencyOptions {
  /** How long a key answers retries. */
  ttlMs: number;
  /** How long a retry waits for a first request still running before 409 code 10. */
  waitMs: number;
  /**
   * A first request without an answer that has not been marked running for this long is taken
   * over (its process died): a process marks its running first requests every `staleMs / 4`.
   */
  staleMs: number;
  /** How long a process marks one first request running at most (then it may be taken over). */
  holdMs: number;
  /**
   * How often a retry waiting on a first request of another process reads its key again when
   * no notice woke it (a notice on `ons_idempotency` wakes it as soon as that request ends;
   * this is for the notices missed while this process does not listen).
   */
  pollMs: number;
}

export const IDEMPOTENCY_DEFAULTS: IdempotencyOptions = {
  ttlMs: 24 * 60 * 60 * 1000,
  waitMs: 10_000,
  staleMs: 2 * 60 * 1000,
  holdMs: 15 * 60 * 1000,
  pollMs: 1_000,
};

/** The most characters a key may have. */
export const MAX_KEY_LENGTH = 255;

const keyField = (reason: string) =>
  invalid(`Idempotency-Key ${reason}`, [{ field: 'Idempotency-Key', reason }]);

/** Refuses a key that is empty, longer than 255 characters or not visible ASCII (400 code 3). */
export function checkKey(key: string): void {
  if (key.length === 0) throw keyField('must not be empty');
  if (key.length > MAX_KEY_LENGTH) throw keyField(`must be at most ${MAX_KEY_LENGTH} characters`);
  if (!/^[\x20-\x7e]+$/.test(key)) throw keyField('must be visible ASCII characters');
}

const idText = (id: KeyId) => `${id.scope}\n${id.route}\n${id.key}`;

/**
 * Idempotency keys (docs/api.md, "Idempotent requests"): the first request with a key runs
 * and its answer is kept; a retry with the same key and the same request gets that answer;
 * another request with the key is refused (400 code 3); a retry while the first still runs
 * waits for it (at most `waitMs`), then 409 code 10. Keys live in PostgreSQL, so every
 * process shares them; a first request of this process is also awaited in memory, one of
 * another process until its end is announced (`heard`, src/notices.ts).
 */
export class IdempotencyService implements IdempotencyNotices {
  private readonly running = new Map<
    string,
    { done: Promise<void>; finish: () => void; beat: NodeJS.Timeout }
  >();
  private readonly waiting = new WaitingRetries();
  private readonly opts: IdempotencyOptions;

  constructor(
    private readonly db: Executor,
    private readonly clock: Clock,
    opts: Partial<IdempotencyOptions> = {},
  ) {
    this.opts = { ...IDEMPOTENCY_DEFAULTS, ...opts };
  }

  /** Takes the key for this request (`run`), or answers what the first request answered. */
  async begin(id: KeyId, requestHash: string): Promise<Begun> {
    const deadline = Date.now() + this.opts.waitMs;
    const stored = storedId(id);
    const notice = noticeOf(stored);
    for (;;) {
      // Watched before the key is read: the end of a first request announced between the
      // read and the wait still wakes the wait.
      const watch = this.waiting.watch(notice);
      try {
        const begun = await this.attempt(id, stored, requestHash);
        if (begun) return begun;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new AppError(
            Code.ABORTED,
            'a request with this Idempotency-Key is still running; retry later',
          );
        }
        await this.pause(id, left, watch.woken);
      } finally {
        watch.stop();
      }
    }
  }

  /** One look at the key: taken, answered, refused (thrown), or null (still running). */
  private async attempt(id: KeyId, stored: KeyId, requestHash: string): Promise<Begun | null> {
    const now = this.clock.now();
    const taken = await claimKey(
      this.db,
      stored,
      requestHash,
      now,
      new Date(now.getTime() + this.opts.ttlMs),
      new Date(now.getTime() - this.opts.staleMs),
    );
    if (taken) {
      let finish = () => {};
      const done = new Promise<void>((resolve) => (finish = resolve));
      this.running.set(idText(id), { done, finish, beat: this.heartbeat(id, requestHash) });
      return { kind: 'run' };
    }
    const row = await findKey(this.db, stored, now);
    if (row) {
      if (row.request_hash !== requestHash) {
        throw keyField('was already used with another request (method, path or body)');
      }
      const body = row.status !== null ? open(id, row.body ?? '') : null;
      if (row.status !== null && body !== null) {
        return {
          kind: 'replay',
          answer: { status: row.status, headers: row.headers ?? {}, body },
        };
      }
    }
    return null;
  }

  heard(payload: string): void {
    this.waiting.heard(payload);
  }

  wakeAll(): void {
    this.waiting.wakeAll();
  }

  /** Keeps the first request's answer for its retries. */
  async complete(id: KeyId, requestHash: string, answer: StoredAnswer): Promise<void> {
    try {
      await completeKey(this.db, storedId(id), requestHash, {
        ...answer,
        body: seal(id, answer.body),
      });
    } finally {
      this.settle(id);
    }
  }

  /** Keeps nothing: a retry with the key runs again. */
  async release(id: KeyId, requestHash: string): Promise<void> {
    try {
      await releaseKey(this.db, storedId(id), requestHash);
    } finally {
      this.settle(id);
    }
  }

  private settle(id: KeyId): void {
    const k = idText(id);
    const run = this.running.get(k);
    if (run) {
      clearInterval(run.beat);
      run.finish();
    }
    this.running.delete(k);
  }

  /**
   * Marks a first request of this process running every `staleMs / 4` until it ends (or for
   * `holdMs` at most), so that a retry takes its key over only when its process is gone, not
   * while it is slow. A mark that fails is tried again at the next beat.
   */
  private heartbeat(id: KeyId, requestHash: string): NodeJS.Timeout {
    const stored = storedId(id);
    const until = Date.now() + this.opts.holdMs;
    const beat = setInterval(
      () => {
        if (Date.now() > until) {
          clearInterval(beat);
          return;
        }
        touchKey(this.db, stored, requestHash, this.clock.now()).catch(() => undefined);
      },
      Math.max(10, Math.floor(this.opts.staleMs / 4)),
    );
    beat.unref();
    return beat;
  }

  /**
   * Until the first request ends, with no query meanwhile: one of this process is awaited in
   * memory (up to `left`); another process's until its end is announced (`woken`), or for
   * `pollMs` at most, in case the notice was missed. A gap in the notices wakes it too.
   */
  private async pause(id: KeyId, left: number, woken: Promise<void>): Promise<void> {
    const local = this.running.get(idText(id));
    const ms = local ? left : Math.min(left, this.opts.pollMs);
    let timer: NodeJS.Timeout | undefined;
    const slept = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    await Promise.race([local ? local.done : woken, slept]);
    clearTimeout(timer);
  }
}
