interface Lane {
  running: number;
  waiting: Array<() => void>;
}

/**
 * At most `concurrency` holders at once per key (an organization), and at most `queue` more waiting
 * for a slot, first come first served; past both, {@link enter} refuses (the caller answers 429).
 * A key's waiters wait only for that key's holders: other keys never queue behind them. In memory,
 * per instance, like {@link RateLimiter}; a key is forgotten when its last holder leaves.
 */
export class ConcurrencyGate {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
  ) {}

  /**
   * A slot for `key`: a promise of its release (call it once, in a finally), settled at once or when
   * a slot frees up; or null when the key's slots and queue are all taken.
   */
  enter(key: string): Promise<() => void> | null {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { running: 0, waiting: [] };
      this.lanes.set(key, lane);
    }
    const held = lane;
    if (held.running < this.concurrency) {
      held.running += 1;
      return Promise.resolve(this.release(key, held));
    }
    if (held.waiting.length >= this.queue) return null;
    return new Promise((resolve) => held.waiting.push(() => resolve(this.release(key, held))));
  }

  /** Holders and waiters of a key (for tests and metrics). */
  load(key: string): { running: number; waiting: number } {
    const lane = this.lanes.get(key);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  private release(key: string, lane: Lane): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = lane.waiting.shift();
      // The slot passes straight to the first waiter; `running` is unchanged.
      if (next) next();
      else if (--lane.running === 0) this.lanes.delete(key);
    };
  }
}
