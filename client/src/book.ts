import type { LiveClient } from './live';

/** The top of a market's book: best bid and ask in basis points, null when a side is empty. */
export interface TopOfBook {
  bestBid: number | null;
  bestAsk: number | null;
  /** The `seq` of the last update applied (0: the REST snapshot alone). */
  seq: number;
  /** Where the state came from last. */
  source: 'snapshot' | 'update';
}

/**
 * A market's top of book kept live (D-527): the REST snapshot (`GET /orderbook/top`), then every
 * `orderbook:{id}` update; after a reset (a 4010 projection switch, an unresumable gap) a new
 * snapshot. A snapshot never overwrites an update that arrived while it was being fetched.
 */
export function keepBook(live: LiveClient, snapshot: () => Promise<{ best_bid: number | null; best_ask: number | null }>, marketId: string | number) {
  const channel = `orderbook:${marketId}`;
  const feed = live.subscribe(channel);
  let state: TopOfBook | undefined;
  let version = 0;
  let snapshots = 0;
  const listeners = new Set<(b: TopOfBook) => void>();
  const set = (b: TopOfBook) => {
    state = b;
    for (const l of listeners) l(b);
  };
  const takeSnapshot = async () => {
    const at = version;
    const top = await snapshot();
    snapshots += 1;
    if (version === at) set({ bestBid: top.best_bid, bestAsk: top.best_ask, seq: state?.seq ?? 0, source: 'snapshot' });
  };
  const ready = takeSnapshot();
  const loop = (async () => {
    for await (const item of feed) {
      if (item.type === 'reset') {
        await takeSnapshot();
        continue;
      }
      version += 1;
      const d = item.data as { bestBid: number | null; bestAsk: number | null };
      set({ bestBid: d.bestBid, bestAsk: d.bestAsk, seq: item.seq, source: 'update' });
    }
  })();
  return {
    /** Resolves once the first snapshot is in. */
    ready: ready.then(() => undefined),
    get current(): TopOfBook | undefined {
      return state;
    },
    /** REST snapshots taken so far (1 + one per reset). */
    snapshots: () => snapshots,
    /** Calls `f` with every new state; returns the unsubscribe. */
    onChange(f: (b: TopOfBook) => void) {
      listeners.add(f);
      return () => listeners.delete(f);
    },
    /** Resolves with the first state `pred` accepts (the current one included). */
    until(pred: (b: TopOfBook) => boolean): Promise<TopOfBook> {
      if (state && pred(state)) return Promise.resolve(state);
      return new Promise((resolve) => {
        const off = this.onChange((b) => {
          if (pred(b)) {
            off();
            resolve(b);
          }
        });
      });
    },
    async close() {
      await feed.return?.();
      await loop;
    },
  };
}
export type KeptBook = ReturnType<typeof keepBook>;
