import type { Db } from '../../../core/db';
import { MarketState } from '../../../core/domain';
import type { DbRow } from './rows';

/** A market by its numeric epoch id (the oldest of that id) or by its address (D-6). */
export const marketByKey = (db: Db, key: string) =>
  /^\d+$/.test(key)
    ? db.oneOrNone<DbRow>('SELECT * FROM markets WHERE market_id = $1 ORDER BY id LIMIT 1', [key])
    : db.oneOrNone<DbRow>('SELECT * FROM markets WHERE address = $1', [key]);

/** One page of markets, newest first, and how many there are (in `state`, when given). */
export async function marketsPage(db: Db, q: { state?: number; limit: number; offset: number }): Promise<{ rows: DbRow[]; total: number }> {
  const where = q.state === undefined ? '' : 'WHERE state = $3';
  // Deferred join: the offset is skipped on the narrow index alone, then only `limit` rows are read.
  const [rows, count] = await Promise.all([
    db.any<DbRow>(
      `SELECT m.* FROM markets m JOIN (SELECT id FROM markets ${where} ORDER BY market_id DESC, id DESC LIMIT $1 OFFSET $2) page USING (id)
        ORDER BY m.market_id DESC, m.id DESC`,
      [q.limit, q.offset, q.state],
    ),
    db.one<{ n: number }>(`SELECT COALESCE(sum(n), 0)::int AS n FROM market_counts ${where.replace('$3', '$1')}`, [q.state]),
  ]);
  return { rows, total: count.n };
}

/** The trading market that started last, or else the next one to start; null when neither exists. */
export async function currentMarket(db: Db): Promise<{ row: DbRow; trading: boolean } | null> {
  const trading = await db.oneOrNone<DbRow>('SELECT * FROM markets WHERE state = $1 ORDER BY t_start DESC, id LIMIT 1', [MarketState.Trading]);
  if (trading) return { row: trading, trading: true };
  const upcoming = await db.oneOrNone<DbRow>('SELECT * FROM markets WHERE state IN ($1, $2) ORDER BY t_start, id LIMIT 1', [MarketState.Pending, MarketState.Created]);
  return upcoming ? { row: upcoming, trading: false } : null;
}

/** The best `depth` levels of each side of a market's YES book. */
export const bookLevels = (db: Db, market: string, depth: number) =>
  Promise.all([
    db.any<DbRow>('SELECT * FROM orderbook_levels WHERE market_address = $1 AND book_side = 0 ORDER BY price_bps DESC LIMIT $2', [market, depth]),
    db.any<DbRow>('SELECT * FROM orderbook_levels WHERE market_address = $1 AND book_side = 1 ORDER BY price_bps ASC LIMIT $2', [market, depth]),
  ]).then(([bids, asks]) => ({ bids, asks }));

/** Top of book of one market, or of the newest market when none is named. */
export const topOfBook = (db: Db, market: string | undefined) =>
  market
    ? db.oneOrNone<DbRow>('SELECT address, best_bid, best_ask FROM markets WHERE address = $1', [market])
    : db.oneOrNone<DbRow>('SELECT address, best_bid, best_ask FROM markets ORDER BY market_id DESC, id DESC LIMIT 1');

export const creatorFeeClaims = (db: Db, market: string) =>
  db.any<DbRow>('SELECT * FROM creator_fee_claims WHERE market_address = $1 ORDER BY id DESC', [market]);

export const marketsOfCreator = (db: Db, wallet: string) =>
  db.any<DbRow>('SELECT * FROM markets WHERE creator = $1 ORDER BY market_id DESC, id DESC', [wallet]);
