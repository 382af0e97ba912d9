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

/**
 * Positions with what the appendix's position adds, derived from the orders: shares held back
 * by resting sell orders, and the owner's order count in the market.
 */
const POSITION_WITH_ORDERS = `
  SELECT p.*, m.state,
         COALESCE(o.locked_yes, 0)::text AS locked_yes, COALESCE(o.locked_no, 0)::text AS locked_no, COALESCE(o.orders, 0)::int AS order_count
    FROM positions p JOIN markets m ON m.address = p.market_address
    LEFT JOIN LATERAL (
      SELECT sum(quantity - filled_quantity) FILTER (WHERE side_code = 1 AND status_code IN (0, 4, 5)) AS locked_yes,
             sum(quantity - filled_quantity) FILTER (WHERE side_code = 3 AND status_code IN (0, 4, 5)) AS locked_no,
             count(*) AS orders
        FROM orders WHERE market_address = p.market_address AND owner = p.owner
    ) o ON true`;

export const positionOf = (db: Db, market: string, owner: string) =>
  db.oneOrNone<DbRow>(`${POSITION_WITH_ORDERS} WHERE p.market_address = $1 AND p.owner = $2`, [market, owner]);

export const positionsWithOrders = (db: Db, q: { owner: string; states?: number[]; settled?: boolean; limit: number }) =>
  db.any<DbRow>(
    `${POSITION_WITH_ORDERS} WHERE p.owner = $1 ${q.states ? 'AND m.state = ANY($3::smallint[])' : ''} ${q.settled === undefined ? '' : 'AND p.settled = $4'}
      ORDER BY p.id DESC LIMIT $2`,
    [q.owner, q.limit, q.states, q.settled],
  );

/** A wallet's position totals: counts, payouts, deposits, and settled positions that paid more than they cost. */
export const positionSummary = (db: Db, owner: string) =>
  db.one<{ total: number; active: number; settled: number; payout: string; deposited: string; settled_cost: string; wins: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE NOT settled)::int AS active, count(*) FILTER (WHERE settled)::int AS settled,
            COALESCE(sum(payout), 0)::text AS payout, COALESCE(sum(collateral_deposited), 0)::text AS deposited,
            COALESCE(sum(yes_cost + no_cost) FILTER (WHERE settled), 0)::text AS settled_cost,
            count(*) FILTER (WHERE settled AND payout > yes_cost + no_cost)::int AS wins
       FROM positions WHERE owner = $1`,
    [owner],
  );
