/**
 * A background loop owned by the service (the API-key last-used flusher, the event bus's
 * group committer): started after the HTTP app, stopped on shutdown (src/server.ts).
 */
export interface Worker {
  name: string;
  start(): void;
  /** Stops taking new work and finishes what is in hand. */
  stop(): Promise<void>;
}

/** An idle wait that `wake()` cuts short: a worker's pause between passes. */
export class Pause {
  private waking: (() => void) | null = null;

  /** Resolves after `ms`, or at once when woken meanwhile. */
  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waking = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waking = done;
    });
  }

  wake(): void {
    this.waking?.();
  }
}

/** `worker`, started only when `run()` says so at start (a role or a setting decides). */
export function startedWhen(run: () => boolean, worker: Worker): Worker {
  return {
    name: worker.name,
    start: () => {
      if (run()) worker.start();
    },
    stop: () => worker.stop(),
  };
}
