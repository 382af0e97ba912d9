import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { OUTCOME_LABELS, type Outcome } from '../../core/domain';
import { ApiError } from '../http/errors';
import { base58Address, NO_PARAMS, parse } from '../http/validate';
import { iso } from '../read/serialize';
import type { Guards } from './guards';

type Row = Record<string, unknown>;
export const COMPUTED_STATS_CAP = 10_000;
const TOKEN_UNIT = 1_000_000;

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
  const rows = await db.any<{ day: string; cumulative: string }>(
    `WITH span AS (SELECT generate_series(current_date - ($2::int - 1), current_date, interval '1 day')::date AS day),
          before AS (SELECT COALESCE(sum(pnl), 0) AS v FROM daily_pnl WHERE wallet = $1 AND day < current_date - ($2::int - 1))
     SELECT to_char(s.day, 'YYYY-MM-DD') AS day,
            ((SELECT v FROM before) + COALESCE(sum(d.pnl) OVER (ORDER BY s.day), 0))::text AS cumulative
       FROM span s LEFT JOIN daily_pnl d ON d.wallet = $1 AND d.day = s.day ORDER BY s.day`,
    [wallet, days],
  );
  return rows.map((r) => ({ date: `${r.day}T00:00:00.000Z`, value: Number(r.cumulative) / TOKEN_UNIT }));
}

const daysSchema = Joi.object({ days: Joi.number().integer().min(1).max(365).default(30) });
const walletParam = Joi.object({ wallet: base58Address.required() });
const tradesQuery = Joi.object({
  limit: Joi.number().integer().min(1).max(1000).default(20),
  cursor: Joi.string().max(200),
  offset: Joi.number().integer().min(0).max(1_000_000),
  outcome: Joi.string().valid('win', 'loss'),
});

/** Opaque keyset cursor over (settled_at, id), newest first. */
const encodeCursor = (settledAt: Date, id: number) => Buffer.from(`${settledAt.toISOString()}|${id}`).toString('base64url');
function decodeCursor(c: string): { at: string; id: number } {
  const [at, id] = Buffer.from(c, 'base64url').toString().split('|');
  if (!at || !id || Number.isNaN(Date.parse(at)) || !/^\d{1,18}$/.test(id)) {
    throw new ApiError('INVALID_PARAMETER', 'Invalid cursor', [{ field: 'query.cursor', message: 'cursor is not one this server issued' }]);
  }
  return { at, id: Number(id) };
}

export function statsRouter(db: Db, g: Guards): Router {
  const r = Router();
  const authed = g.wallet('authenticated');

  r.get('/stats', authed, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const stored = await db.oneOrNone<Row>('SELECT * FROM user_stats WHERE wallet = $1', [req.wallet]);
    if (stored) return void res.json({ data: fromStored(stored) });
    const rows = await db.any<Row>(
      'SELECT pnl, shares, is_win FROM settled_trades WHERE wallet = $1 ORDER BY settled_at DESC, id DESC LIMIT $2',
      [req.wallet, COMPUTED_STATS_CAP],
    );
    res.json({ data: computeStats(rows) });
  });

  r.get('/stats/history', authed, async (req, res) => {
    const q = parse(daysSchema, req.query, 'query');
    res.json({ data: { history: await pnlHistory(db, req.wallet!, q.days) } });
  });

  r.get('/stats/user/:wallet/pnl-history', g.ip('public'), async (req, res) => {
    const { wallet } = parse(walletParam, req.params, 'path');
    const q = parse(daysSchema, req.query, 'query');
    res.json({ data: { history: await pnlHistory(db, wallet, q.days) } });
  });

  r.get('/stats/trades', authed, async (req, res) => {
    if (req.query.cursor !== undefined && req.query.offset !== undefined) {
      throw new ApiError('INVALID_PARAMETER', 'cursor and offset cannot be combined', [
        { field: 'query.cursor', message: 'cursor cannot be combined with offset' },
      ]);
    }
    const q = parse(tradesQuery, req.query, 'query');
    const params: unknown[] = [req.wallet, q.limit + 1];
    const where = ['wallet = $1'];
    if (q.outcome) {
      params.push(q.outcome === 'win');
      where.push(`is_win = $${params.length}`);
    }
    const countWhere = where.join(' AND ');
    if (q.cursor) {
      const c = decodeCursor(q.cursor);
      params.push(c.at, c.id);
      where.push(`(settled_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
    }
    const off = q.cursor ? 0 : (q.offset ?? 0);
    const [rows, count] = await Promise.all([
      db.any<Row>(`SELECT * FROM settled_trades WHERE ${where.join(' AND ')} ORDER BY settled_at DESC, id DESC LIMIT $2 OFFSET ${off}`, params),
      // The count uses $1 (and $3 for outcome) of the same values: pg-promise ignores the rest.
      db.one<{ n: number }>(`SELECT count(*)::int AS n FROM settled_trades WHERE ${countWhere}`, params.slice(0, q.outcome ? 3 : 1)),
    ]);
    const hasMore = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    res.json({
      data: {
        trades: page.map((t) => ({
          id: Number(t.id),
          marketId: String(t.market_id),
          side: t.side as string,
          shares: String(t.shares),
          cost: String(t.cost),
          payout: String(t.payout),
          pnl: String(t.pnl),
          outcome: t.is_win ? 'win' : 'loss',
          marketOutcome: OUTCOME_LABELS[Number(t.market_outcome) as Outcome],
          settledAt: iso(t.settled_at),
          tStart: iso(t.t_start),
          tEnd: iso(t.t_end),
        })),
        total: count.n,
        hasMore,
        nextCursor: hasMore && last ? encodeCursor(last.settled_at as Date, Number(last.id)) : null,
      },
    });
  });

  return r;
}
