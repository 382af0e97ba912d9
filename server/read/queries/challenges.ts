import type { Db } from '../../../core/db';

/** Per wallet, its trades, distinct markets and volume on one UTC day (`YYYY-MM-DD`), as maker or taker. */
export const tradersOfDay = (db: Db, day: string) =>
  db.any<{ wallet: string; trades: number; markets: number; volume: string }>(
    `WITH t AS (
       SELECT maker AS wallet, market_address, quantity FROM trades WHERE executed_at >= $1::date AND executed_at < $1::date + 1
       UNION ALL
       SELECT taker, market_address, quantity FROM trades WHERE executed_at >= $1::date AND executed_at < $1::date + 1)
     SELECT wallet, count(*)::int AS trades, count(DISTINCT market_address)::int AS markets, sum(quantity)::text AS volume
       FROM t GROUP BY wallet`,
    [day],
  );
