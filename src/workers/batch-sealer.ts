import type { Logger } from 'pino';
import { Pause, type Worker } from '../lib/worker.js';
import type { BatchSealer } from '../modules/batches/sealer.js';

export interface SealerWorkerOptions {
  /**
   * How often an idle sealer looks again. A full batch closes within this; the actions
   * numbered past it meanwhile join the batch named to follow it (docs/batches.md), so a
   * look every 100 ms keeps up with far more than a batch's worth of actions in that time.
   */
  idlePollMs?: number;
  /** How long it waits after a failed pass. */
  errorPauseMs?: number;
}

/**
 * Runs the batch pipeline (src/modules/batches/sealer.ts) in two loops side by side: one
 * opens and closes batches, the other writes headers and proofs, anchors and finalizes, so a
 * header in the works never holds up a close. Each goes again at once while a pass did
 * something, else every `idlePollMs`. Runs in the API process (BATCH_SEALER) or alone
 * (`npm run worker`); processes share it through the sealer's advisory lock.
 */
export class BatchSealerWorker implements Worker {
  readonly name = 'batch-sealer';
  private readonly idlePollMs: number;
  private readonly errorPauseMs: number;
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly pauses = [new Pause(), new Pause()] as const;

  constructor(
    private readonly sealer: BatchSealer,
    private readonly logger: Logger,
    opts: SealerWorkerOptions = {},
  ) {
    this.idlePollMs = opts.idlePollMs ?? 100;
    this.errorPauseMs = opts.errorPauseMs ?? 1_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = [
      this.run(() => this.sealer.openOrSeal(), this.pauses[0]),
      this.run(() => this.sealer.advance(), this.pauses[1]),
    ];
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const p of this.pauses) p.wake();
    await Promise.all(this.loops);
  }

  private async run(pass: () => Promise<boolean>, pause: Pause): Promise<void> {
    while (this.running) {
      let wait = this.idlePollMs;
      try {
        if (await pass()) wait = 0;
      } catch (err) {
        this.logger.error({ err }, 'the batch sealer failed; will retry');
        wait = this.errorPauseMs;
      }
      if (wait > 0 && this.running) await pause.wait(wait);
    }
  }
}
