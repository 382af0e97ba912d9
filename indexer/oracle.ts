import type { Db } from '../core/db';
import { decodePythPriceAccount, observationOf, OracleDecodeError, type OracleObservation } from '../core/oracle/pyth';
import type { Logger } from '../core/telemetry/logger';
import type { Indexer } from './indexer';
import type { Source } from './sources/types';

/**
 * Inserts observations and folds the ones it created into their one-minute candles, in one
 * statement: a replay or a second read of an unchanged account inserts nothing, so it adds
 * nothing to a candle (D-151). Only trading aggregates are prices; the others are kept as
 * observations but make no candle.
 */
export const INSERT_OBSERVATIONS = `
WITH ins AS (
  INSERT INTO oracle_observations (feed, pub_slot, publish_time, price, conf, expo, status, ema_price, ema_conf)
  SELECT o.feed, o.pub_slot, to_timestamp(o.publish_time), o.price, o.conf, o.expo, o.status, o.ema_price, o.ema_conf
    FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::numeric[], $5::numeric[], $6::int[], $7::smallint[], $8::numeric[], $9::numeric[])
      AS o(feed, pub_slot, publish_time, price, conf, expo, status, ema_price, ema_conf)
  ON CONFLICT (feed, pub_slot) DO NOTHING
  RETURNING feed, pub_slot, publish_time, price, expo, status
), buckets AS (
  SELECT feed, date_bin('1 minute', publish_time, TIMESTAMPTZ 'epoch') AS bucket,
         (array_agg(price ORDER BY pub_slot))[1] AS open, max(price) AS high, min(price) AS low,
         (array_agg(price ORDER BY pub_slot DESC))[1] AS close, (array_agg(expo ORDER BY pub_slot DESC))[1] AS expo,
         min(pub_slot) AS open_slot, max(pub_slot) AS close_slot, count(*)::int AS observations
    FROM ins WHERE status = 1
   GROUP BY 1, 2
), candles AS (
  INSERT INTO oracle_candles_1m AS c (feed, bucket, open, high, low, close, expo, open_slot, close_slot, observations)
  SELECT feed, bucket, open, high, low, close, expo, open_slot, close_slot, observations FROM buckets
  ON CONFLICT (feed, bucket) DO UPDATE SET
    open = CASE WHEN EXCLUDED.open_slot < c.open_slot THEN EXCLUDED.open ELSE c.open END,
    open_slot = LEAST(c.open_slot, EXCLUDED.open_slot),
    high = GREATEST(c.high, EXCLUDED.high),
    low = LEAST(c.low, EXCLUDED.low),
    close = CASE WHEN EXCLUDED.close_slot > c.close_slot THEN EXCLUDED.close ELSE c.close END,
    expo = CASE WHEN EXCLUDED.close_slot > c.close_slot THEN EXCLUDED.expo ELSE c.expo END,
    close_slot = GREATEST(c.close_slot, EXCLUDED.close_slot),
    observations = c.observations + EXCLUDED.observations
  RETURNING 1
)
SELECT (SELECT count(*)::int FROM ins) AS inserted`;

/** Stores observations exactly once; returns how many were new. */
export async function storeObservations(db: Db, obs: readonly OracleObservation[]): Promise<number> {
  if (!obs.length) return 0;
  const { inserted } = await db.one<{ inserted: number }>(INSERT_OBSERVATIONS, [
    obs.map((o) => o.feed),
    obs.map((o) => o.pubSlot.toString()),
    obs.map((o) => o.publishTime.toString()),
    obs.map((o) => o.price.toString()),
    obs.map((o) => o.conf.toString()),
    obs.map((o) => o.expo),
    obs.map((o) => o.status),
    obs.map((o) => o.emaPrice.toString()),
    obs.map((o) => o.emaConf.toString()),
  ]);
  return inserted;
}

export interface OracleIngest {
  /** Reads every known feed's account once and stores what is new. */
  poll(signal?: AbortSignal): Promise<{ feeds: number; read: number; inserted: number }>;
  /** A poll soon, in the background; requests while one runs coalesce into one more. */
  request(signal?: AbortSignal): void;
  /** Resolves when no poll runs. */
  idle(): Promise<void>;
}

/**
 * The oracle poll (D-150): the feeds are the `oracle_feed` of indexed markets (new markets are
 * picked up incrementally by row id); their Pyth price accounts are read through the source
 * (`getMultipleAccounts` on RPC, the chain's state in the simulator), decoded, and stored.
 * An account that is not a v2 price account is logged once per feed and skipped.
 */
export function createOracleIngest(opts: { db: Db; source: Source; logger: Logger }): OracleIngest {
  const { db, source, logger } = opts;
  const feeds = new Set<string>();
  const refused = new Set<string>();
  let lastMarketId = -1;
  let running: Promise<unknown> | undefined;
  let again = false;

  async function discover(): Promise<void> {
    const r = await db.one<{ last: string | null; feeds: string[] | null }>(
      `SELECT max(id) AS last, array_agg(DISTINCT oracle_feed) FILTER (WHERE oracle_feed IS NOT NULL) AS feeds
         FROM markets WHERE id > $1`,
      [lastMarketId],
    );
    if (r.last !== null) lastMarketId = Number(r.last);
    for (const f of r.feeds ?? []) feeds.add(f);
  }

  async function poll(signal?: AbortSignal) {
    await discover();
    if (!source.readAccounts || !feeds.size) return { feeds: feeds.size, read: 0, inserted: 0 };
    const addresses = [...feeds];
    const accounts = await source.readAccounts(addresses, signal);
    const obs: OracleObservation[] = [];
    accounts.forEach((a, i) => {
      const feed = addresses[i]!;
      if (!a) return;
      try {
        const observation = observationOf(feed, decodePythPriceAccount(a.data));
        // Never published (pub_slot 0): nothing to record yet.
        if (observation.pubSlot > 0n) obs.push(observation);
      } catch (err) {
        if (!(err instanceof OracleDecodeError)) throw err;
        if (!refused.has(feed)) logger.warn({ feed, reason: err.message }, 'oracle feed account is not a Pyth price account; skipped');
        refused.add(feed);
      }
    });
    return { feeds: addresses.length, read: obs.length, inserted: await storeObservations(db, obs) };
  }

  function request(signal?: AbortSignal): void {
    if (signal?.aborted) return;
    if (running) {
      again = true;
      return;
    }
    running = poll(signal)
      .catch((err: unknown) => {
        if (!signal?.aborted) logger.warn({ err }, 'oracle poll failed');
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          request(signal);
        }
      });
  }

  return {
    poll,
    request,
    async idle() {
      while (running) await running;
    },
  };
}

/**
 * Polls while this process is the writer: after every committed batch (the markets it created
 * are known by then) and every `intervalMs` on a quiet chain. Returns the stop hook.
 */
/** `when`: a further condition (a build ingests once it is the live schema, D-411). */
export function runOracleIngest(indexer: Indexer, ingest: OracleIngest, opts: { intervalMs?: number; when?: () => boolean } = {}): () => Promise<void> {
  // Aborted on stop: the RPC client retries a failing node until its caller gives up.
  const controller = new AbortController();
  const poll = () => {
    if (indexer.status().role === 'writer' && (opts.when?.() ?? true)) ingest.request(controller.signal);
  };
  indexer.onBatch(poll);
  const timer = setInterval(poll, opts.intervalMs ?? 1_000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    controller.abort();
    await ingest.idle();
  };
}
