/**
 * A least-recently-used cache bounded by the total size of its values (`sizeOf`, in bytes):
 * keeping a value drops the least recently used ones until it fits. A value larger than
 * `maxEntryBytes` (a quarter of the budget by default) is not kept, so one large value cannot
 * empty the cache. `load` builds a missing value once however many ask for it at the same
 * time; a build that fails is not kept.
 */
export class ByteLru<K, V> {
  /** In order of use, the least recent first (a Map keeps insertion order). */
  private readonly entries = new Map<K, { value: V; bytes: number }>();
  private readonly building = new Map<K, Promise<V>>();
  private held = 0;
  private readonly maxEntryBytes: number;

  constructor(
    private readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    maxEntryBytes = maxBytes / 4,
  ) {
    this.maxEntryBytes = Math.min(maxEntryBytes, maxBytes);
  }

  /** The bytes its values hold now. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  /** Keeps `value` as the most recently used; false when it is too large to keep. */
  set(key: K, value: V): boolean {
    this.delete(key);
    const bytes = this.sizeOf(value);
    if (bytes > this.maxEntryBytes) return false;
    for (const [k, e] of this.entries) {
      if (this.held + bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.held -= e.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.held += bytes;
    return true;
  }

  delete(key: K): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.held -= e.bytes;
  }

  /**
   * The value of `key`: kept, or being built for an earlier call (the same promise), or else
   * built now by `build` and kept (when it is not too large).
   */
  load(key: K, build: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return Promise.resolve(hit);
    const pending = this.building.get(key);
    if (pending) return pending;
    const started = Promise.resolve()
      .then(build)
      .then((value) => {
        this.set(key, value);
        return value;
      })
      .finally(() => this.building.delete(key));
    this.building.set(key, started);
    return started;
  }
}
