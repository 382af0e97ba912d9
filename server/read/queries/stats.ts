import type { Db } from '../../../core/db';
import { RESTING_ORDERS_COUNT } from './orders';
import type { DbRow } from './rows';

export const storedUserStats = (db: Db, wallet: string) => db.oneOrNone<DbRow>('SELECT * FROM user_stats WHERE wallet = $1', [wallet]);

/** A wallet's newest `cap` settled trades, newest first (what `/stats` computes from without a stored record). */
export const newestSettledTrades = (db: Db, wallet: string, cap: number) =>
  db.any<DbRow>('SELECT pnl, shares, is_win FROM settled_trades WHERE wallet = $1 ORDER BY settled_at DESC, id DESC LIMIT $2', [wallet, cap]);

/** Cumulative P&L per UTC day over the last `days` days, in base units, oldest first (D-15). */
export const cumulativeDailyPnl = (db: Db, wallet: string, days: number) =>
  db.any<{ day: string; cumulative: string }>(
    `WITH span AS (SELECT generate_series(current_date - ($2::int - 1), current_date, interval '1 day')::date AS day),
          before AS (SELECT COALESCE(sum(pnl), 0) AS v FROM daily_pnl WHERE wallet = $1 AND day < current_date - ($2::int - 1))
     SELECT to_char(s.day, 'YYYY-MM-DD') AS day,
            ((SELECT v FROM before) + COALESCE(sum(d.pnl) OVER (ORDER BY s.day), 0))::text AS cumulative
       FROM span s LEFT JOIN daily_pnl d ON d.wallet = $1 AND d.day = s.day ORDER BY s.day`,
    [wallet, days],
  );

/**
 * One page of a wallet's settled trades, newest first: after the keyset `after` when given,
 * else from `offset`; `limit + 1` rows are read so the caller knows whether more follow. The
 * total counts every match of `isWin` (the keyset does not narrow it).
 */
export async function settledTradesPage(
  db: Db,
  q: { wallet: string; limit: number; isWin?: boolean; after?: { at: string; id: number }; offset: number },
): Promise<{ rows: DbRow[]; total: number }> {
  const params: unknown[] = [q.wallet, q.limit + 1];
  const where = ['wallet = $1'];
  if (q.isWin !== undefined) {
    params.push(q.isWin);
    where.push(`is_win = $${params.length}`);
  }
  const countWhere = where.join(' AND ');
  if (q.after) {
    params.push(q.after.at, q.after.id);
    where.push(`(settled_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
  }
  const [rows, count] = await Promise.all([
    db.any<DbRow>(`SELECT * FROM settled_trades WHERE ${where.join(' AND ')} ORDER BY settled_at DESC, id DESC LIMIT $2 OFFSET ${q.after ? 0 : q.offset}`, params),
    // The count uses $1 (and $3 for the outcome) of the same values.
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM settled_trades WHERE ${countWhere}`, params.slice(0, q.isWin === undefined ? 1 : 3)),
  ]);
  return { rows, total: count.n };
}

/** Markets per state and the platform totals, both maintained by the indexer in its batch transactions. */
export const platformTotals = (db: Db) =>
  Promise.all([
    db.any<{ state: number; n: number }>('SELECT state, n::int AS n FROM market_counts'),
    db.one<DbRow>(
      `SELECT total_volume::text AS volume, total_trades::text AS trades, total_positions::text AS positions,
              unique_traders::int AS traders, (${RESTING_ORDERS_COUNT}) AS resting,
              creator_fees::text AS creator_fees, protocol_fees::text AS protocol_fees
         FROM platform_totals`,
    ),
  ]).then(([states, totals]) => ({ states, totals }));
