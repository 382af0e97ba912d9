import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** Trades logged by one transaction, in event order (`/trades?tx=` and `/orders?tx=`). */
export const tradesOfTransaction = (db: Db, tx: string, limit: number) =>
  db.any<DbRow>('SELECT * FROM trades WHERE tx_signature = $1 ORDER BY event_index LIMIT $2', [tx, limit]);

export const recentTrades = (db: Db, limit: number) => db.any<DbRow>('SELECT * FROM trades ORDER BY id DESC LIMIT $1', [limit]);
