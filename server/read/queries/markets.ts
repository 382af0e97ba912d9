import type { Db } from '../../../core/db';
import { MarketState } from '../../../core/domain';
import type { DbRow } from './rows';

/** A market by its numeric epoch id (the oldest of that id) or by its address (D-6). */
export const marketByKey = (db: Db, key: string) =>
  /^\d+$/.test(key)
    ? db.oneOrNone<DbRow>('SELECT * FROM markets WHERE market_id = $1 ORDER BY id LIMIT 1', [key])
    : db.oneOrNone<DbRow>('SELECT * FROM markets WHERE address = $1', [key]);

export interface MarketsPageQuery {
  state?: number;
  limit: number;
  offset: number;
}

/**
 * One page of `GET /markets`, newest epoch first (market_id DESC, id DESC), and the total.
 *
 * A deep OFFSET is found by the block counts the projector keeps (`market_list_blocks`, D-130):
 * running sums over the blocks, newest first, name the block the page starts in and how many
 * of its entries come before the page, so the index skips at most one block's entries instead
 * of `offset` entries. The counts and the rows are read in one statement, so one snapshot: a
 * batch the indexer commits meanwhile is in both or in neither.
 */
function pageQuery(filtered: boolean): string {
  const byState = filtered ? 'AND state = $3' : '';
  return `WITH blocks AS (
      SELECT block, sum(n) AS n FROM market_list_blocks WHERE true ${byState} GROUP BY block
    ), start AS (
      SELECT block, ($2 - (before_and_in - n))::bigint AS skip
        FROM (SELECT block, n, sum(n) OVER (ORDER BY block DESC) AS before_and_in FROM blocks) c
       WHERE before_and_in > $2
       ORDER BY block DESC LIMIT 1
    )
    SELECT m.* FROM markets m JOIN (
      SELECT id FROM markets
       WHERE market_id < (SELECT market_list_block_end(block) FROM start) ${byState}
       ORDER BY market_id DESC, id DESC LIMIT $1 OFFSET (SELECT skip FROM start)
    ) page USING (id)
    ORDER BY m.market_id DESC, m.id DESC`;
}

const PAGE = pageQuery(false);
const PAGE_OF_STATE = pageQuery(true);

/** `db` may be a transaction (the tests compare it with a plain OFFSET in one snapshot). */
export async function marketsPage(db: Pick<Db, 'any' | 'one'>, q: MarketsPageQuery): Promise<{ rows: DbRow[]; total: number }> {
  const filtered = q.state !== undefined;
  const [rows, count] = await Promise.all([
    db.any<DbRow>(filtered ? PAGE_OF_STATE : PAGE, [q.limit, q.offset, q.state]),
    db.one<{ n: number }>(`SELECT COALESCE(sum(n), 0)::int AS n FROM market_counts ${filtered ? 'WHERE state = $1' : ''}`, [q.state]),
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

/**
 * Markets newest first (epoch id, then row id) after a keyset position, `limit + 1` rows so the
 * caller knows whether more exist: stable under inserts, unlike an offset.
 */
export function marketsAfter(
  db: Db,
  q: { states?: number[]; feed?: string; from?: number; to?: number; after?: { marketId: string; id: string }; limit: number },
): Promise<DbRow[]> {
  const where: string[] = [];
  const args: unknown[] = [q.limit + 1];
  const arg = (v: unknown) => `$${args.push(v)}`;
  if (q.states) where.push(`state = ANY(${arg(q.states)}::smallint[])`);
  if (q.feed) where.push(`oracle_feed = ${arg(q.feed)}`);
  if (q.from !== undefined) where.push(`t_start >= to_timestamp(${arg(q.from)})`);
  if (q.to !== undefined) where.push(`t_start <= to_timestamp(${arg(q.to)})`);
  if (q.after) where.push(`(market_id, id) < (${arg(q.after.marketId)}::numeric, ${arg(q.after.id)}::bigint)`);
  return db.any<DbRow>(`SELECT * FROM markets ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY market_id DESC, id DESC LIMIT $1`, args);
}

/** A market's trade totals and its distinct traders (makers and takers). */
export const marketTradeStats = (db: Db, market: string) =>
  db.one<{ trades: number; volume: string; traders: number }>(
    `SELECT count(*)::int AS trades, COALESCE(sum(quantity), 0)::text AS volume,
            (SELECT count(*)::int FROM (SELECT maker FROM trades WHERE market_address = $1 UNION SELECT taker FROM trades WHERE market_address = $1) w) AS traders
       FROM trades WHERE market_address = $1`,
    [market],
  );
