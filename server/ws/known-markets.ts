/**
 * Whether a `market:` / `orderbook:` channel names a market (D-352), at a bounded cost. A
 * marketId above the newest indexed one may be a market not created yet, which a client may
 * subscribe to ahead: it is let through. One at or below it is looked up: a market found is
 * remembered for good (markets are never deleted), one not found for a few seconds, and
 * concurrent questions about one id share one query. The newest marketId is read at most once a
 * second. What a client can still make cost (distinct unknown ids below the newest) is bounded
 * per connection by the caller (WS_LIMITS.maxUnknownMarkets).
 */
import type { Db } from '../../core/db';

export type KnownMarket = (marketId: string) => Promise<boolean>;

/** A Map kept to `max` entries, the oldest insertion dropped first. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as string);
}

/** `load`'s result, reused for `ttlMs`; concurrent callers share one load. */
function cached<T>(load: () => Promise<T>, ttlMs: number, now: () => number): () => Promise<T> {
  let value: { at: number; v: T } | undefined;
  let pending: Promise<T> | undefined;
  return () => {
    if (value && now() - value.at < ttlMs) return Promise.resolve(value.v);
    pending ??= load()
      .then((v) => ((value = { at: now(), v }), v))
      .finally(() => (pending = undefined));
    return pending;
  };
}

export function createKnownMarkets(deps: {
  exists: (marketId: string) => Promise<boolean>;
  /** The highest marketId indexed, undefined when there is none. */
  newest: () => Promise<bigint | undefined>;
  /** How long an id found missing is answered from memory (a market created meanwhile waits this long). */
  missingTtlMs?: number;
  newestTtlMs?: number;
  maxEntries?: number;
  now?: () => number;
}): KnownMarket {
  const { missingTtlMs = 5_000, newestTtlMs = 1_000, maxEntries = 10_000, now = Date.now } = deps;
  const found = new Map<string, true>();
  const missing = new Map<string, number>();
  const inFlight = new Map<string, Promise<boolean>>();
  const newest = cached(deps.newest, newestTtlMs, now);
  return async (marketId) => {
    if (found.has(marketId)) return true;
    const top = await newest();
    if (top === undefined || BigInt(marketId) > top) return true;
    const until = missing.get(marketId);
    if (until !== undefined && until > now()) return false;
    const pending = inFlight.get(marketId);
    if (pending) return pending;
    const lookup = deps
      .exists(marketId)
      .then((exists) => {
        if (exists) {
          remember(found, marketId, true, maxEntries);
          missing.delete(marketId);
        } else remember(missing, marketId, now() + missingTtlMs, maxEntries);
        return exists;
      })
      .finally(() => inFlight.delete(marketId));
    inFlight.set(marketId, lookup);
    return lookup;
  };
}

/** The store's answers: index probes on `markets (market_id …)`. */
export function marketsIn(db: Db): { exists: (marketId: string) => Promise<boolean>; newest: () => Promise<bigint | undefined> } {
  return {
    exists: async (marketId) => (await db.oneOrNone('SELECT 1 FROM markets WHERE market_id = $1 LIMIT 1', [marketId])) !== null,
    newest: async () => {
      const row = await db.one<{ m: string | null }>('SELECT max(market_id)::text AS m FROM markets');
      return row.m === null ? undefined : BigInt(row.m);
    },
  };
}
