import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/**
 * A wallet's positions with their market's state and prices (the last trade price for the
 * mark), newest first; how many match; and the payout balance of its settled positions.
 */
export async function positionsOfOwner(
  db: Db,
  q: { owner: string; settled?: boolean; limit: number; offset: number },
): Promise<{ rows: DbRow[]; total: number; balance: string }> {
  const filter = q.settled === undefined ? '' : 'AND p.settled = $4';
  const [rows, count, balance] = await Promise.all([
    db.any<DbRow>(
      `SELECT p.*, m.oracle_feed, m.state, m.outcome, m.best_bid, m.best_ask,
              (SELECT t.price_bps FROM trades t WHERE t.market_address = p.market_address ORDER BY t.id DESC LIMIT 1) AS last_price
         FROM positions p JOIN markets m ON m.address = p.market_address
        WHERE p.owner = $1 ${filter} ORDER BY p.id DESC LIMIT $2 OFFSET $3`,
      [q.owner, q.limit, q.offset, q.settled],
    ),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM positions p WHERE p.owner = $1 ${filter.replace('$4', '$2')}`, [q.owner, q.settled]),
    db.one<{ balance: string }>(`SELECT COALESCE(sum(payout), 0)::text AS balance FROM positions WHERE owner = $1 AND settled`, [q.owner]),
  ]);
  return { rows, total: count.n, balance: balance.balance };
}
