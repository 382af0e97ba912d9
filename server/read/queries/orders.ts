import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** Resting orders (open, pending_cancel, cancel_failed): answered from the partial index `orders_resting_idx`. */
export const RESTING_ORDERS_COUNT = 'SELECT count(*)::int FROM orders WHERE status_code IN (0, 4, 5)';

/**
 * An order's status as served: an open order with a built cancel (`cancel_requests`, D-143)
 * is pending_cancel (4) until the indexer has processed the cancel's last valid slot, then
 * cancel_failed (5); any status the chain gave it (filled, cancelled, expired) wins.
 */
const EFFECTIVE_STATUS = `CASE WHEN o.status_code = 0 AND cr.order_id IS NOT NULL
    THEN CASE WHEN cur.last_processed_slot > cr.valid_until_slot THEN 5 ELSE 4 END
    ELSE o.status_code END`;
const WITH_CANCELS = `LEFT JOIN cancel_requests cr ON cr.market_address = o.market_address AND cr.order_id = o.order_id
  LEFT JOIN indexer_cursor cur ON true`;

/** A wallet's orders with their market's epoch id and mint, newest first, and how many match. */
export async function ordersOfOwner(
  db: Db,
  q: { owner: string; statusCode: number | null; limit: number; offset: number },
): Promise<{ rows: DbRow[]; total: number }> {
  const filter = q.statusCode === null ? '' : `AND ${EFFECTIVE_STATUS} = $4`;
  const [rows, count] = await Promise.all([
    db.any<DbRow>(
      `SELECT o.*, ${EFFECTIVE_STATUS} AS effective_status_code, m.market_id, m.settlement_mint
         FROM orders o JOIN markets m ON m.address = o.market_address ${WITH_CANCELS}
        WHERE o.owner = $1 ${filter} ORDER BY o.id DESC LIMIT $2 OFFSET $3`,
      [q.owner, q.limit, q.offset, q.statusCode],
    ),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM orders o ${WITH_CANCELS} WHERE o.owner = $1 ${filter.replace('$4', '$2')}`, [q.owner, q.statusCode]),
  ]);
  return { rows: rows.map(({ effective_status_code, ...r }) => ({ ...r, status_code: effective_status_code })), total: count.n };
}

/**
 * A market's resting orders (open, pending_cancel, cancel_failed), best first in time order,
 * optionally one side of the YES book (bids: BuyYes and SellNo; asks: SellYes and BuyNo) or one owner.
 */
export function restingOrdersOfMarket(db: Db, q: { market: string; bookSide?: 0 | 1; owner?: string; limit: number }): Promise<DbRow[]> {
  const where = ['market_address = $1', 'status_code IN (0, 4, 5)'];
  const args: unknown[] = [q.market, q.limit];
  if (q.bookSide !== undefined) where.push(q.bookSide === 0 ? 'side_code IN (0, 3)' : 'side_code IN (1, 2)');
  if (q.owner) where.push(`owner = $${args.push(q.owner)}`);
  return db.any<DbRow>(`SELECT * FROM orders WHERE ${where.join(' AND ')} ORDER BY id LIMIT $2`, args);
}
