import type { Logger } from 'pino';
import type { Db } from '../../db/pool.js';
import type { Clock } from '../../lib/clock.js';
import { consistencyProofOf } from './hashes.js';
import * as repo from './repo.js';
import { addCheckpoint, type WitnessConfig } from './witness.js';

/** How often an idle log looks at its witnesses' cosignatures (one query). */
const REFRESH_LOOK_MS = 60_000;

export interface WitnessingDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  witnesses: WitnessConfig[];
  /**
   * A witness whose cosignature of the latest checkpoint is older than this, or missing, is
   * asked again when the log has nothing to append (docs/log.md, "Witnesses"); 0: never.
   */
  witnessRefreshMs?: number;
}

/**
 * The log's side of C2SP tlog-witness (docs/log.md, "Witnesses"): sends checkpoints to the
 * configured witnesses off the log's path and stores the cosignatures that come back.
 */
export class Witnessing {
  /** Each witness's request in flight, and whether a newer checkpoint waits for it. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly pending = new Set<string>();
  /** When an idle pass last looked for cosignatures to refresh (the clock's ms). */
  private refreshLookedAt = -Infinity;

  constructor(private readonly deps: WitnessingDeps) {}

  /**
   * Asks again each witness whose cosignature of the latest checkpoint is older than
   * `witnessRefreshMs` or missing (a witness that was down catches up). A witness cosigns
   * the same checkpoint again with a new time (C2SP tlog-witness: `old` equal to the size,
   * no proof), so a log that does not grow still shows verifiers fresh cosignatures, and one
   * that stops showing them is frozen or showing an old view (`maxAgeSeconds` in the SDK).
   * Looks at most once a minute.
   */
  async refresh(): Promise<void> {
    const { db, clock, witnesses, witnessRefreshMs = 0 } = this.deps;
    if (witnesses.length === 0 || witnessRefreshMs <= 0) return;
    const now = clock.now().getTime();
    if (now - this.refreshLookedAt < REFRESH_LOOK_MS) return;
    this.refreshLookedAt = now;
    const cp = await repo.latestCheckpoint(db);
    if (cp === null) return;
    const at = await repo.cosignedAt(db, cp.batch_sequence);
    const due = witnesses.filter((w) => {
      const t = at.get(w.verifier.name);
      return t === undefined || now - t.getTime() >= witnessRefreshMs;
    });
    if (due.length > 0) this.sendInBackground(due);
  }

  /**
   * Submits the latest checkpoint to every witness, off the caller's path. Each witness has
   * at most one request in flight; a checkpoint made meanwhile goes to it when that request
   * ends (the latest one only), so a witness that is down holds up neither the log nor the
   * other witnesses.
   */
  sendInBackground(witnesses: readonly WitnessConfig[] = this.deps.witnesses): void {
    for (const w of witnesses) {
      const name = w.verifier.name;
      if (this.inFlight.has(name)) {
        this.pending.add(name);
        continue;
      }
      const run = (async () => {
        do {
          this.pending.delete(name);
          const cp = await repo.latestCheckpoint(this.deps.db);
          if (cp !== null) await this.sendOne(w, cp);
        } while (this.pending.has(name));
      })()
        .catch((err: unknown) =>
          this.deps.logger.warn({ err, witness: name }, 'log: witnessing failed'),
        )
        .finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, run);
    }
  }

  /** Waits until no witness request is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /**
   * Sends one checkpoint to one witness with a consistency proof from the size it last
   * cosigned; on a 409 it is told the witness's size and tries once more from there.
   */
  private async sendOne(w: WitnessConfig, cp: repo.CheckpointRow): Promise<void> {
    const { db, clock, logger } = this.deps;
    let old = await repo.witnessSize(db, w.verifier.name);
    for (let attempt = 0; attempt < 2; attempt++) {
      if (old > cp.tree_size) return; // a witness ahead of us: nothing to send
      // The size it cosigned already: no proof, and it cosigns again with a new time.
      const proof =
        old === 0 || old === cp.tree_size ? [] : await consistencyProofOf(db, old, cp.tree_size);
      let answer;
      try {
        answer = await addCheckpoint(w, old, proof, cp.note, clock.now());
      } catch (err) {
        logger.warn(
          { witness: w.verifier.name, err: (err as Error).message },
          'log: a witness did not answer',
        );
        return;
      }
      if (answer.kind === 'size') {
        old = answer.size;
        continue;
      }
      if (answer.kind === 'refused') {
        logger.warn(
          { witness: w.verifier.name, status: answer.status, message: answer.message },
          'log: a witness refused a checkpoint',
        );
        return;
      }
      await repo.saveCosignature(db, {
        sequence: cp.batch_sequence,
        witness: w.verifier.name,
        line: answer.line,
        now: clock.now(),
      });
      await repo.saveWitnessSize(db, w.verifier.name, cp.tree_size, clock.now());
      return;
    }
  }
}
