import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** Resting orders (open, pending_cancel, cancel_failed): answered from the partial index `orders_resting_idx`. */
export const RESTING_ORDERS_COUNT = 'SELECT count(*)::int FROM orders WHERE status_code IN (0, 4, 5)';

/** A wallet's orders with their market's epoch id and mint, newest first, and how many match. */
export async function ordersOfOwner(
  db: Db,
  q: { owner: string; statusCode: number | null; limit: number; offset: number },
): Promise<{ rows: DbRow[]; total: number }> {
  const filter = q.statusCode === null ? '' : 'AND o.status_code = $4';
  const [rows, count] = await Promise.all([
    db.any<DbRow>(
      `SELECT o.*, m.market_id, m.settlement_mint FROM orders o JOIN markets m ON m.address = o.market_address
        WHERE o.owner = $1 ${filter} ORDER BY o.id DESC LIMIT $2 OFFSET $3`,
      [q.owner, q.limit, q.offset, q.statusCode],
    ),
    db.one<{ n: number }>(`SELECT count(*)::int AS n FROM orders o WHERE o.owner = $1 ${filter.replace('$4', '$2')}`, [q.owner, q.statusCode]),
  ]);
  return { rows, total: count.n };
}
