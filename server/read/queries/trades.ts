import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** Trades logged by one transaction, in event order (`/trades?tx=` and `/orders?tx=`). */
export const tradesOfTransaction = (db: Db, tx: string, limit: number) =>
  db.any<DbRow>('SELECT * FROM trades WHERE tx_signature = $1 ORDER BY event_index LIMIT $2', [tx, limit]);

export const recentTrades = (db: Db, limit: number) => db.any<DbRow>('SELECT * FROM trades ORDER BY id DESC LIMIT $1', [limit]);

/** A market's trades newest first, between two times (Unix seconds), of one taker side. */
export function tradesOfMarket(db: Db, q: { market: string; from?: number; to?: number; takerSides?: number[]; limit: number }): Promise<DbRow[]> {
  const where = ['market_address = $1'];
  const args: unknown[] = [q.market, q.limit];
  if (q.from !== undefined) where.push(`executed_at >= to_timestamp($${args.push(q.from)})`);
  if (q.to !== undefined) where.push(`executed_at <= to_timestamp($${args.push(q.to)})`);
  if (q.takerSides) where.push(`taker_side = ANY($${args.push(q.takerSides)}::smallint[])`);
  return db.any<DbRow>(`SELECT t.*, (SELECT market_id FROM markets m WHERE m.address = t.market_address) AS market_id FROM trades t WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $2`, args);
}

/** A wallet's trades newest first, as taker, maker or either, optionally in one market. */
export function tradesOfWallet(db: Db, q: { owner: string; role?: 'taker' | 'maker'; market?: string; limit: number }): Promise<DbRow[]> {
  const who = q.role === 'taker' ? 'taker = $1' : q.role === 'maker' ? 'maker = $1' : '(taker = $1 OR maker = $1)';
  const args: unknown[] = [q.owner, q.limit];
  const market = q.market ? `AND market_address = $${args.push(q.market)}` : '';
  return db.any<DbRow>(
    `SELECT t.*, (SELECT market_id FROM markets m WHERE m.address = t.market_address) AS market_id FROM trades t WHERE ${who} ${market} ORDER BY id DESC LIMIT $2`,
    args,
  );
}

/** Totals of one period (Unix seconds): markets created and resolved, outcomes, trades, volume, traders. */
export const periodStats = (db: Db, since: number) =>
  db.one<{ created: number; resolved: number; up: number; down: number; trades: number; volume: string; traders: number }>(
    `SELECT (SELECT count(*)::int FROM markets WHERE created_at >= to_timestamp($1)) AS created,
            (SELECT count(*)::int FROM markets WHERE resolved_at >= to_timestamp($1)) AS resolved,
            (SELECT count(*)::int FROM markets WHERE resolved_at >= to_timestamp($1) AND outcome = 1) AS up,
            (SELECT count(*)::int FROM markets WHERE resolved_at >= to_timestamp($1) AND outcome = 0) AS down,
            count(*)::int AS trades, COALESCE(sum(quantity), 0)::text AS volume,
            (SELECT count(*)::int FROM (SELECT maker FROM trades WHERE executed_at >= to_timestamp($1) UNION SELECT taker FROM trades WHERE executed_at >= to_timestamp($1)) w) AS traders
       FROM trades WHERE executed_at >= to_timestamp($1)`,
    [since],
  );

/** Markets ever created and the platform's total volume. */
export const platformTotals = (db: Db) =>
  db.one<{ markets: number; volume: string }>(
    `SELECT (SELECT COALESCE(sum(n), 0)::int FROM market_counts) AS markets, (SELECT total_volume::text FROM platform_totals WHERE id = 1) AS volume`,
  );
