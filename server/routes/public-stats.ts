import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { MARKET_STATE_NAMES } from '../../core/domain';
import { base58Address, limit, NO_PARAMS, parse } from '../http/validate';
import { RESTING_ORDERS_COUNT } from '../read/queries';
import type { Guards } from './guards';

type Row = Record<string, unknown>;

/** Today's challenges (UTC day): fixed goals measured on the day's trades (decision D-45). */
export const DAILY_CHALLENGES = [
  { code: 'trades_10', name: 'Make 10 trades today', metric: 'trades', target: 10 },
  { code: 'markets_3', name: 'Trade in 3 different markets today', metric: 'markets', target: 3 },
  { code: 'volume_50m', name: 'Trade 50,000,000 base units today', metric: 'volume', target: 50_000_000 },
] as const;

const leaderboardQuery = Joi.object({ metric: Joi.string().valid('pnl', 'volume', 'trades').default('pnl'), limit: limit(25, 100) });
const addressParam = Joi.object({ address: base58Address.required() });

export function publicStatsRouter(db: Db, g: Guards): Router {
  const r = Router();
  const pub = g.ip('public');

  r.get('/stats/platform', g.ip('public_read'), async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    // Maintained by the indexer in its batch transactions: no scan of markets or trades here.
    const [states, totals] = await Promise.all([
      db.any<{ state: number; n: number }>('SELECT state, n::int AS n FROM market_counts'),
      db.one<Row>(
        `SELECT total_volume::text AS volume, total_trades::text AS trades, total_positions::text AS positions,
                unique_traders::int AS traders, (${RESTING_ORDERS_COUNT}) AS resting,
                creator_fees::text AS creator_fees, protocol_fees::text AS protocol_fees
           FROM platform_totals`,
      ),
    ]);
    const byState = Object.fromEntries(MARKET_STATE_NAMES.map((name, code) => [name, states.find((s) => s.state === code)?.n ?? 0]));
    res.json({
      data: {
        markets: { total: states.reduce((a, s) => a + s.n, 0), byState },
        totalVolume: totals.volume,
        totalTrades: Number(totals.trades),
        totalPositions: Number(totals.positions),
        uniqueTraders: totals.traders,
        restingOrders: totals.resting,
        protocolFees: totals.protocol_fees,
        creatorFees: totals.creator_fees,
      },
    });
  });

  r.get('/leaderboard', pub, async (req, res) => {
    const q = parse(leaderboardQuery, req.query, 'query');
    const order = { pnl: 's.total_pnl DESC NULLS LAST', volume: 'a.volume DESC', trades: 'a.trades_count DESC' }[q.metric as 'pnl' | 'volume' | 'trades'];
    const rows = await db.any<Row>(
      `SELECT a.wallet, a.volume::text AS volume, a.trades_count::int AS trades, COALESCE(s.total_pnl, 0)::text AS pnl,
              COALESCE(s.total_trades, 0) AS settled, COALESCE(s.winning_trades, 0) AS wins
         FROM trader_activity a LEFT JOIN user_stats s ON s.wallet = a.wallet
        ORDER BY ${order}, a.wallet LIMIT $1`,
      [q.limit],
    );
    res.json({
      data: {
        metric: q.metric,
        limit: q.limit,
        leaderboard: rows.map((x, i) => ({
          rank: i + 1,
          wallet: x.wallet as string,
          totalPnl: x.pnl as string,
          volume: x.volume as string,
          trades: Number(x.trades),
          winRate: Number(x.settled) === 0 ? 0 : Math.round((Number(x.wins) / Number(x.settled)) * 10_000) / 100,
        })),
      },
    });
  });

  r.get('/challenges/today', pub, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const day = new Date().toISOString().slice(0, 10);
    const rows = await db.any<Row>(
      `WITH t AS (
         SELECT maker AS wallet, market_address, quantity FROM trades WHERE executed_at >= $1::date AND executed_at < $1::date + 1
         UNION ALL
         SELECT taker, market_address, quantity FROM trades WHERE executed_at >= $1::date AND executed_at < $1::date + 1)
       SELECT wallet, count(*)::int AS trades, count(DISTINCT market_address)::int AS markets, sum(quantity)::text AS volume
         FROM t GROUP BY wallet`,
      [day],
    );
    const metric = (x: Row, m: string) => (m === 'volume' ? Number(x.volume) : Number(x[m]));
    res.json({
      data: {
        date: `${day}T00:00:00.000Z`,
        endsAt: new Date(Date.parse(day) + 86_400_000).toISOString(),
        participants: rows.length,
        challenges: DAILY_CHALLENGES.map((c) => ({ ...c, completedBy: rows.filter((x) => metric(x, c.metric) >= c.target).length })),
      },
    });
  });

  r.get('/v2/wallet/:address/analytics', pub, async (req, res) => {
    const { address } = parse(addressParam, req.params, 'path');
    parse(NO_PARAMS, req.query, 'query');
    const w = await db.one<Row>(
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
      [address],
    );
    const settled = Number(w.settled ?? 0);
    res.json({
      data: {
        wallet: address,
        trading: {
          totalPnl: (w.total_pnl as string | null) ?? '0',
          settledTrades: settled,
          winRate: settled === 0 ? 0 : Math.round((Number(w.wins ?? 0) / settled) * 10_000) / 100,
          trades: Number(w.trades ?? 0),
          volume: (w.volume as string | null) ?? '0',
          marketsTraded: Number(w.markets_traded ?? 0),
        },
        creation: { marketsCreated: w.markets_created, feesEarned: w.fees_earned, feesClaimable: w.fees_claimable },
        referral: { totalEarned: w.ref_earned, accumulated: w.ref_accumulated, totalClaimed: w.ref_claimed, refereesCount: w.referees },
      },
    });
  });

  return r;
}
