/**
 * One injectable clock (docs/architecture.md, "Conventions for contributors"): services read time
 * only through it.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can set and move instead of sleeping. */
export class FakeClock implements Clock {
  private ms: number;
  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  set(to: Date | string): void {
    this.ms = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
