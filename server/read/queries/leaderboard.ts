import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

export type LeaderboardMetric = 'pnl' | 'volume' | 'trades';
const ORDER: Record<LeaderboardMetric, string> = { pnl: 's.total_pnl DESC NULLS LAST', volume: 'a.volume DESC', trades: 'a.trades_count DESC' };

/** The top `limit` traders by `metric`, ties by wallet. */
export const traderLeaderboard = (db: Db, metric: LeaderboardMetric, limit: number) =>
  db.any<DbRow>(
    `SELECT a.wallet, a.volume::text AS volume, a.trades_count::int AS trades, COALESCE(s.total_pnl, 0)::text AS pnl,
            COALESCE(s.total_trades, 0) AS settled, COALESCE(s.winning_trades, 0) AS wins
       FROM trader_activity a LEFT JOIN user_stats s ON s.wallet = a.wallet
      ORDER BY ${ORDER[metric]}, a.wallet LIMIT $1`,
    [limit],
  );
