import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** A wallet's trading, market-creation and referral figures in one snapshot. */
export const walletAnalytics = (db: Db, wallet: string) =>
  db.one<DbRow>(
    `SELECT (SELECT total_pnl::text FROM user_stats WHERE wallet = $1) AS total_pnl,
            (SELECT total_trades FROM user_stats WHERE wallet = $1) AS settled,
            (SELECT winning_trades FROM user_stats WHERE wallet = $1) AS wins,
            (SELECT trades_count::int FROM trader_activity WHERE wallet = $1) AS trades,
            (SELECT volume::text FROM trader_activity WHERE wallet = $1) AS volume,
            (SELECT markets_traded FROM trader_activity WHERE wallet = $1) AS markets_traded,
            (SELECT count(*)::int FROM markets WHERE creator = $1) AS markets_created,
            (SELECT COALESCE(sum(creator_fees_earned), 0)::text FROM markets WHERE creator = $1) AS fees_earned,
            (SELECT COALESCE(sum(accumulated_creator_fees), 0)::text FROM markets WHERE creator = $1 AND state IN (4, 5)) AS fees_claimable,
            (SELECT COALESCE(sum(total_earned), 0)::text FROM referrer_earnings WHERE wallet = $1) AS ref_earned,
            (SELECT COALESCE(sum(accumulated), 0)::text FROM referrer_earnings WHERE wallet = $1) AS ref_accumulated,
            (SELECT COALESCE(sum(total_claimed), 0)::text FROM referrer_earnings WHERE wallet = $1) AS ref_claimed,
            (SELECT count(*)::int FROM referral_locks WHERE referrer = $1) AS referees`,
    [wallet],
  );
