import type { Db } from '../../../core/db';
import type { DbRow } from './rows';

/** The checks of `/tx/*` (issue 22) read what the indexer projected; the chain decides for good. */
export const orderInMarket = (db: Db, market: string, orderId: string) =>
  db.oneOrNone<{ owner: string; status_code: number }>('SELECT owner, status_code FROM orders WHERE market_address = $1 AND order_id = $2', [market, orderId]);

export const positionInMarket = (db: Db, market: string, owner: string) =>
  db.oneOrNone<DbRow>('SELECT address, settled, yes_shares, no_shares FROM positions WHERE market_address = $1 AND owner = $2', [market, owner]);

export const referrerAccumulated = (db: Db, wallet: string, mint: string) =>
  db.oneOrNone<{ accumulated: string }>('SELECT accumulated FROM referrer_earnings WHERE wallet = $1 AND settlement_mint = $2', [wallet, mint]);

/** A built cancel (D-143): the order reads pending_cancel until `validUntilSlot` is indexed. */
export const recordCancelRequest = (db: Db, r: { market: string; orderId: string; owner: string; validUntilSlot: number }) =>
  db.none(
    `INSERT INTO cancel_requests (market_address, order_id, owner, valid_until_slot) VALUES ($1, $2, $3, $4)
       ON CONFLICT (market_address, order_id) DO UPDATE SET valid_until_slot = EXCLUDED.valid_until_slot, requested_at = now()`,
    [r.market, r.orderId, r.owner, r.validUntilSlot],
  );
