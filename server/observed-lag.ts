import type { Db } from '../core/db';
import type { Logger } from '../core/telemetry/logger';
import type { Metrics } from '../core/telemetry/metrics';
import type { ChainAccess } from '../core/tx';

/** How often each API replica looks (one cursor read and one RPC call: a scrape sees at most this old). */
export const OBSERVE_LAG_MS = 5_000;

/**
 * The tenant indexer's slot lag as the API sees it from outside, the way a Kafka consumer-lag
 * exporter watches a consumer: the chain tip from the API's own RPC minus the slot the indexer
 * last committed (D-213). The indexer reports its lag itself, but a frozen or hung indexer
 * reports nothing (Prometheus marks its series stale), so the slot-lag alerts read both and
 * page on lag whatever state the indexer is in. While the RPC or the database cannot say, the
 * API's value is NaN rather than a stale number or a reassuring 0 (an unlabelled gauge cannot
 * be withdrawn): PromQL's `max` passes over it and no comparison with it holds.
 */
export function observeIndexerLag(deps: { db: Db; chain: ChainAccess; metrics: Metrics; logger: Logger; intervalMs?: number }): () => void {
  const { db, chain, metrics, logger } = deps;
  let failing = false;
  let running: Promise<void> | undefined;
  const look = async () => {
    try {
      const [row, tip] = await Promise.all([db.oneOrNone<{ slot: string }>('SELECT last_processed_slot AS slot FROM indexer_cursor WHERE id = 1'), chain.recentBlockhash()]);
      if (!row) return void metrics.indexerSlotLag.set(Number.NaN);
      metrics.indexerSlotLag.set(Math.max(0, tip.slot - Number(row.slot)));
      if (failing) logger.info('observing the indexer\'s slot lag again');
      failing = false;
    } catch (err) {
      metrics.indexerSlotLag.set(Number.NaN);
      if (!failing) logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'cannot observe the indexer\'s slot lag (RPC or database): NaN until it can');
      failing = true;
    }
  };
  // The first look after one interval: a starting replica has requests to serve first.
  const timer = setInterval(() => {
    // One look at a time: a slow RPC must not pile them up.
    running ??= look().finally(() => (running = undefined));
  }, deps.intervalMs ?? OBSERVE_LAG_MS);
  timer.unref();
  return () => clearInterval(timer);
}
