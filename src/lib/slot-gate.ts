/**
 * At most `slots` pieces of work at once; the rest wait their turn in arrival order, each at
 * most `maxWaitMs` and at most `maxWaiting` of them. One that finds the queue full, or whose
 * wait runs out before a slot frees, is refused with `refuse()` and never starts. A slot is
 * freed when its work settles, however it settles.
 */
export class SlotGate {
  private running = 0;
  private readonly waiting: { start: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(
    private readonly slots: number,
    private readonly maxWaitMs: number,
    private readonly maxWaiting: number,
    private readonly refuse: () => Error,
  ) {}

  /** Work running now, and work waiting for a slot. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) return this.start(work);
    if (this.waiting.length >= this.maxWaiting) return Promise.reject(this.refuse());
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          this.start(work).then(resolve, reject);
        },
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(waiter);
          if (at !== -1) this.waiting.splice(at, 1);
          reject(this.refuse());
        }, this.maxWaitMs),
      };
      // A wait does not keep the process up at shutdown.
      waiter.timer.unref();
      this.waiting.push(waiter);
    });
  }

  private async start<T>(work: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await work();
    } finally {
      this.running--;
      if (this.running < this.slots) this.waiting.shift()?.start();
    }
  }
}
