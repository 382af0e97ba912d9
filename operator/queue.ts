/**
 * A work queue keyed by MarketIndexer name, as controllers keep one: a key queued several times
 * before it is processed is processed once; a key is never processed by two workers at once (one
 * queued while being processed runs again after); a failing key comes back after an exponential
 * backoff with jitter, reset by its next success.
 */
export interface WorkQueue {
  add(key: string): void;
  /** Queues the key after `ms` (a later `add` brings it forward). */
  addAfter(key: string, ms: number): void;
  addRateLimited(key: string): void;
  forget(key: string): void;
  /** Waits for the next key; undefined once shut down. */
  get(): Promise<string | undefined>;
  done(key: string): void;
  readonly depth: number;
  shutDown(): void;
}

export function createWorkQueue(opts: { baseDelayMs?: number; maxDelayMs?: number; random?: () => number } = {}): WorkQueue {
  const base = opts.baseDelayMs ?? 500;
  const max = opts.maxDelayMs ?? 5 * 60_000;
  const random = opts.random ?? Math.random;
  const queue: string[] = [];
  const dirty = new Set<string>();
  const processing = new Set<string>();
  const failures = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  const waiters: ((key: string | undefined) => void)[] = [];
  let closed = false;

  const add = (key: string) => {
    if (closed || dirty.has(key)) return;
    const t = timers.get(key);
    if (t) {
      clearTimeout(t);
      timers.delete(key);
    }
    dirty.add(key);
    if (processing.has(key)) return;
    const waiter = waiters.shift();
    if (waiter) {
      dirty.delete(key);
      processing.add(key);
      waiter(key);
    } else {
      queue.push(key);
    }
  };

  const addAfter = (key: string, ms: number) => {
    if (closed || dirty.has(key) || timers.has(key)) return;
    const t = setTimeout(() => {
      timers.delete(key);
      add(key);
    }, ms);
    t.unref();
    timers.set(key, t);
  };

  return {
    add,
    addAfter,
    addRateLimited(key) {
      const n = (failures.get(key) ?? 0) + 1;
      failures.set(key, n);
      const delay = Math.min(max, base * 2 ** (n - 1));
      // Full jitter in the upper half: failing tenants do not retry in lockstep.
      addAfter(key, Math.round(delay / 2 + (random() * delay) / 2));
    },
    forget: (key) => void failures.delete(key),
    get() {
      if (closed) return Promise.resolve(undefined);
      const key = queue.shift();
      if (key !== undefined) {
        dirty.delete(key);
        processing.add(key);
        return Promise.resolve(key);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
    done(key) {
      processing.delete(key);
      if (dirty.has(key)) {
        dirty.delete(key);
        add(key);
      }
    },
    get depth() {
      return queue.length + timers.size;
    },
    shutDown() {
      closed = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      for (const w of waiters.splice(0)) w(undefined);
    },
  };
}

/**
 * A worker: takes keys from the queue and processes them one at a time until the queue shuts
 * down, going back to the event loop (setImmediate) after each. A reconcile that finds nothing
 * to do awaits nothing real, and a queue whose `get()` resolves at once would otherwise run a
 * thousand of them as one chain of promise callbacks: no watch event, timer, lease renewal or
 * /healthz answered until the queue is empty.
 */
export async function runWorker(queue: WorkQueue, process: (key: string) => Promise<void>): Promise<void> {
  for (;;) {
    const key = await queue.get();
    if (key === undefined) return;
    try {
      await process(key);
    } finally {
      queue.done(key);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}
