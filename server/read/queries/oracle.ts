import type { Db } from '../../../core/db';

/** Candle widths of `/oracle/:feed/history`, declared once: the query, validation and docs read them. */
export const CANDLE_INTERVALS = { '1m': 60, '5m': 300, '15m': 900, '1h': 3600 } as const;
export type CandleInterval = keyof typeof CANDLE_INTERVALS;
/** Most candles one request returns (the range is cut at its start, D-152). */
export const MAX_CANDLES = 1000;

export interface OracleLatest {
  feed: string;
  pubSlot: number;
  publishTime: number;
  price: bigint;
  conf: bigint;
  expo: number;
  status: number;
}

export interface Candle {
  /** Unix seconds of the bucket's start. */
  timestamp: number;
  open: bigint;
  high: bigint;
  low: bigint;
  close: bigint;
  expo: number;
}

/** The newest observation of a feed, or null if none was stored. */
export async function latestObservation(db: Db, feed: string): Promise<OracleLatest | null> {
  const r = await db.oneOrNone<{ pub_slot: string; t: string; price: string; conf: string; expo: number; status: number }>(
    `SELECT pub_slot, extract(epoch FROM publish_time)::bigint AS t, price, conf, expo, status
       FROM oracle_observations WHERE feed = $1 ORDER BY pub_slot DESC LIMIT 1`,
    [feed],
  );
  return r && { feed, pubSlot: Number(r.pub_slot), publishTime: Number(r.t), price: BigInt(r.price), conf: BigInt(r.conf), expo: r.expo, status: r.status };
}

/**
 * OHLC candles of `interval` whose buckets start in [from, to) (Unix seconds; both rounded
 * to the interval, so every candle is whole), rolled up from the one-minute candles: open of the earliest
 * minute, close of the latest, extremes of all. At most MAX_CANDLES, the latest ones.
 */
export async function candles(db: Db, feed: string, interval: CandleInterval, from: number, to: number): Promise<Candle[]> {
  const width = CANDLE_INTERVALS[interval];
  const end = Math.ceil(to / width) * width;
  const start = Math.max(Math.floor(from / width) * width, end - width * MAX_CANDLES);
  const rows = await db.any<{ t: string; open: string; high: string; low: string; close: string; expo: number }>(
    `SELECT extract(epoch FROM date_bin(make_interval(secs => $2), bucket, TIMESTAMPTZ 'epoch'))::bigint AS t,
            (array_agg(open ORDER BY bucket))[1] AS open, max(high) AS high, min(low) AS low,
            (array_agg(close ORDER BY bucket DESC))[1] AS close, (array_agg(expo ORDER BY bucket DESC))[1] AS expo
       FROM oracle_candles_1m
      WHERE feed = $1 AND bucket >= to_timestamp($3) AND bucket < to_timestamp($4)
      GROUP BY 1 ORDER BY 1`,
    [feed, width, start, end],
  );
  return rows.map((r) => ({ timestamp: Number(r.t), open: BigInt(r.open), high: BigInt(r.high), low: BigInt(r.low), close: BigInt(r.close), expo: r.expo }));
}
