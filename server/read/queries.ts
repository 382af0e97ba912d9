import type { Db } from '../../core/db';

type Row = Record<string, unknown>;

/** Trades logged by one transaction, in event order (`/trades?tx=` and `/orders?tx=`). */
export const tradesOfTransaction = (db: Db, tx: string, limit: number) =>
  db.any<Row>('SELECT * FROM trades WHERE tx_signature = $1 ORDER BY event_index LIMIT $2', [tx, limit]);
