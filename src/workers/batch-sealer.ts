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
 * Runs the batch pipeline (src/modules/batches/sealer.ts) in a loop: at once again while a
 * pass did something, else every `idlePollMs`. Runs in the API process (BATCH_SEALER) or
 * alone (`npm run worker`); processes share it through the sealer's advisory lock.
 */
export class BatchSealerWorker implements Worker {
  readonly name = 'batch-sealer';
  private readonly idlePollMs: number;
  private readonly errorPauseMs: number;
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new Pause();

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
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.pause.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let pause = this.idlePollMs;
      try {
        if (await this.sealer.tick()) pause = 0;
      } catch (err) {
        this.logger.error({ err }, 'the batch sealer failed; will retry');
        pause = this.errorPauseMs;
      }
      if (pause > 0 && this.running) await this.pause.wait(pause);
    }
  }
}
