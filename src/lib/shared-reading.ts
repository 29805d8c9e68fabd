/**
 * One reading shared by the gauges that show parts of it: the first gauge of a scrape
 * starts it, the others within `reuseMs` take the same promise, so a scrape costs one
 * query however many series it feeds. A failed reading is not kept.
 */
export function sharedReading<T>(read: () => Promise<T>, reuseMs = 500): () => Promise<T> {
  let last: { at: number; value: Promise<T> } | null = null;
  return () => {
    const now = performance.now();
    if (!last || now - last.at >= reuseMs) {
      const value = read();
      const entry = { at: now, value };
      last = entry;
      value.catch(() => {
        if (last === entry) last = null;
      });
    }
    return last.value;
  };
}

/** Seconds from `since` to `now`, never negative; 0 without a `since`. */
export function ageSeconds(now: Date, since: Date | null): number {
  return since === null ? 0 : Math.max(0, (now.getTime() - since.getTime()) / 1000);
}
