import type { Db } from '../../core/db';

/**
 * Bare `markets` rows for the given epoch ids, as a `/ws` suite needs them: a `market:` or
 * `orderbook:` subscription is refused when its marketId is below the newest indexed one and no
 * market has it (D-352).
 * Addresses are `ws-market-<id>`; nothing else reads these rows.
 */
export async function insertMarkets(db: Db, marketIds: readonly (number | string)[]): Promise<void> {
  await db.none(
    `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, created_at, updated_at, created_slot, created_signature)
     SELECT 8000000000000 + (id::numeric % 1000000000000)::bigint, 'ws-market-' || id, id::numeric, 'mint', 2, to_timestamp(0), to_timestamp(60), now(), now(), 1, 's'
       FROM unnest($1::text[]) id
     ON CONFLICT DO NOTHING`,
    [marketIds.map(String)],
  );
}
