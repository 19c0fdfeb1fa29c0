// A per-key debouncer with injectable timers (so tests need no clock).

export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export class KeyedDebouncer<K> {
  private pending = new Map<K, unknown>();
  constructor(private ms: number, private fire: (key: K) => void, private timers: Timers = realTimers) {}

  /** Schedules key; a later call for the same key within ms replaces it. */
  trigger(key: K): void {
    const h = this.pending.get(key);
    if (h !== undefined) this.timers.clear(h);
    this.pending.set(key, this.timers.set(() => {
      this.pending.delete(key);
      this.fire(key);
    }, this.ms));
  }

  /** Fires key now if it is pending. */
  flush(key: K): void {
    const h = this.pending.get(key);
    if (h === undefined) return;
    this.timers.clear(h);
    this.pending.delete(key);
    this.fire(key);
  }

  setDelay(ms: number): void { this.ms = ms; }

  pendingKeys(): K[] { return [...this.pending.keys()]; }

  dispose(): void {
    for (const h of this.pending.values()) this.timers.clear(h);
    this.pending.clear();
  }
}
