import Joi from 'joi';
import { MARKET_STATE_NAMES } from '../../core/domain';
import { ApiError } from '../http/errors';
import { base58Address, NO_PARAMS } from '../http/validate';
import type { Db } from '../../core/db';
import type { DbRow } from '../read/queries/rows';
import { cumulativeDailyPnl, newestSettledTrades, platformTotals, settledTradesPage, storedUserStats } from '../read/queries/stats';
import { settledTrade } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

type Row = DbRow;
const TOKEN_UNIT = 1_000_000;

export const COMPUTED_STATS_CAP = 10_000;

export interface PersonalStats {
  totalTrades: number;
  winningTrades: number;
  losingTrades: number;
  totalPnl: string;
  avgTradeSize: string;
  bestTradePnl: string;
  worstTradePnl: string;
  winRate: number;
  currentStreak: number;
  longestStreak: number;
}

const winRate = (wins: number, total: number) => (total === 0 ? 0 : Math.round((wins / total) * 10_000) / 100);

function fromStored(r: Row): PersonalStats {
  const total = Number(r.total_trades);
  return {
    totalTrades: total,
    winningTrades: Number(r.winning_trades),
    losingTrades: Number(r.losing_trades),
    totalPnl: String(r.total_pnl),
    avgTradeSize: total === 0 ? '0' : (BigInt(String(r.total_size)) / BigInt(total)).toString(),
    bestTradePnl: String(r.best_trade_pnl ?? '0'),
    worstTradePnl: String(r.worst_trade_pnl ?? '0'),
    winRate: winRate(Number(r.winning_trades), total),
    currentStreak: Number(r.current_streak),
    longestStreak: Number(r.longest_streak),
  };
}

/** Spec 2.12: without a stored record, computed from the newest 10,000 settled trades. */
export function computeStats(rows: Row[]): PersonalStats {
  // Rows come newest first; streaks run in settlement order.
  const ordered = [...rows].reverse();
  let pnl = 0n;
  let size = 0n;
  let wins = 0;
  let best: bigint | null = null;
  let worst: bigint | null = null;
  let streak = 0;
  let longest = 0;
  for (const r of ordered) {
    const p = BigInt(String(r.pnl));
    pnl += p;
    size += BigInt(String(r.shares));
    if (r.is_win) {
      wins += 1;
      streak += 1;
      longest = Math.max(longest, streak);
    } else streak = 0;
    best = best === null || p > best ? p : best;
    worst = worst === null || p < worst ? p : worst;
  }
  const total = ordered.length;
  return {
    totalTrades: total,
    winningTrades: wins,
    losingTrades: total - wins,
    totalPnl: pnl.toString(),
    avgTradeSize: total === 0 ? '0' : (size / BigInt(total)).toString(),
    bestTradePnl: (best ?? 0n).toString(),
    worstTradePnl: (worst ?? 0n).toString(),
    winRate: winRate(wins, total),
    currentStreak: streak,
    longestStreak: longest,
  };
}

/** Cumulative P&L per UTC day over the last `days` days, in token units (decision D-15). */
async function pnlHistory(db: Db, wallet: string, days: number) {
  const rows = await cumulativeDailyPnl(db, wallet, days);
  return rows.map((r) => ({ date: `${r.day}T00:00:00.000Z`, value: Number(r.cumulative) / TOKEN_UNIT }));
}

/** Opaque keyset cursor over (settled_at, id), newest first. */
const encodeCursor = (settledAt: Date, id: number) => Buffer.from(`${settledAt.toISOString()}|${id}`).toString('base64url');
function decodeCursor(c: string): { at: string; id: number } {
  const [at, id] = Buffer.from(c, 'base64url').toString().split('|');
  if (!at || !id || Number.isNaN(Date.parse(at)) || !/^\d{1,18}$/.test(id)) {
    throw new ApiError('INVALID_PARAMETER', 'Invalid cursor', [{ field: 'query.cursor', message: 'cursor is not one this server issued' }]);
  }
  return { at, id: Number(id) };
}

const daysQuery = Joi.object<{ days: number }>({ days: Joi.number().integer().min(1).max(365).default(30) });
const walletParam = Joi.object<{ wallet: string }>({ wallet: base58Address.required() });
const tradesQuery = Joi.object<{ limit: number; cursor?: string; offset: number; outcome?: 'win' | 'loss' }>({
  limit: Joi.number().integer().min(1).max(1000).default(20),
  cursor: Joi.string().max(200),
  offset: Joi.number().integer().min(0).max(1_000_000).default(0),
  outcome: Joi.string().valid('win', 'loss'),
});

/** `/stats`: a wallet's own trading statistics and history, a public P&L history, and the platform's totals. */
export function statsRoutes({ db }: RouteDeps): RouteDef[] {
  const authed = { by: 'wallet', tier: 'authenticated' } as const;
  return [
    route({
      method: 'GET',
      path: '/stats',
      access: authed,
      query: NO_PARAMS,
      handler: async (req, res) => {
        const stored = await storedUserStats(db, req.wallet!);
        res.json({ data: stored ? fromStored(stored) : computeStats(await newestSettledTrades(db, req.wallet!, COMPUTED_STATS_CAP)) });
      },
    }),
    route({
      method: 'GET',
      path: '/stats/history',
      access: authed,
      query: daysQuery,
      handler: async (req, res, { query: q }) => {
        res.json({ data: { history: await pnlHistory(db, req.wallet!, q.days) } });
      },
    }),
    route({
      method: 'GET',
      path: '/stats/user/:wallet/pnl-history',
      access: { by: 'ip', tier: 'public' },
      params: walletParam,
      query: daysQuery,
      handler: async (_req, res, { params, query: q }) => {
        res.json({ data: { history: await pnlHistory(db, params.wallet, q.days) } });
      },
    }),
    route({
      method: 'GET',
      path: '/stats/trades',
      access: authed,
      query: tradesQuery,
      handler: async (req, res, { query: q }) => {
        // The raw query: `offset` has a default once validated.
        if (req.query.cursor !== undefined && req.query.offset !== undefined) {
          throw new ApiError('INVALID_PARAMETER', 'cursor and offset cannot be combined', [{ field: 'query.cursor', message: 'cursor cannot be combined with offset' }]);
        }
        const page = await settledTradesPage(db, {
          wallet: req.wallet!,
          limit: q.limit,
          isWin: q.outcome === undefined ? undefined : q.outcome === 'win',
          after: q.cursor ? decodeCursor(q.cursor) : undefined,
          offset: q.offset,
        });
        const hasMore = page.rows.length > q.limit;
        const rows = page.rows.slice(0, q.limit);
        const last = rows[rows.length - 1];
        res.json({
          data: {
            trades: rows.map(settledTrade),
            total: page.total,
            hasMore,
            nextCursor: hasMore && last ? encodeCursor(last.settled_at as Date, Number(last.id)) : null,
          },
        });
      },
    }),
    route({
      method: 'GET',
      path: '/stats/platform',
      access: { by: 'ip', tier: 'public_read' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        // Maintained by the indexer in its batch transactions: no scan of markets or trades here.
        const { states, totals } = await platformTotals(db);
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
      },
    }),
  ];
}
