import type { Db } from './index';

/**
 * Every projected table in a canonical order (the tables of `PROJECTED` in ./tables and the
 * counters and ledger the projector keeps with them), without columns that legitimately differ
 * between runs (dead-letter ids and insert times). Two databases with equal digests hold
 * the same projection, row for row.
 */
export const PROJECTED_TABLES: Record<string, string> = {
  markets: 'SELECT * FROM markets ORDER BY id',
  orders: 'SELECT * FROM orders ORDER BY id',
  orderbook_levels: 'SELECT * FROM orderbook_levels ORDER BY market_address, book_side, price_bps',
  trades: 'SELECT * FROM trades ORDER BY id',
  positions: 'SELECT * FROM positions ORDER BY id',
  fee_config_history: 'SELECT * FROM fee_config_history ORDER BY id',
  tick_size_history: 'SELECT * FROM tick_size_history ORDER BY id',
  referral_locks: 'SELECT * FROM referral_locks ORDER BY wallet',
  referrer_earnings: 'SELECT * FROM referrer_earnings ORDER BY wallet, settlement_mint',
  referrer_credits: 'SELECT * FROM referrer_credits ORDER BY id',
  referrer_claims: 'SELECT * FROM referrer_claims ORDER BY id',
  creator_fee_accruals: 'SELECT * FROM creator_fee_accruals ORDER BY id',
  creator_fee_claims: 'SELECT * FROM creator_fee_claims ORDER BY id',
  trader_activity: 'SELECT * FROM trader_activity ORDER BY wallet',
  user_stats: 'SELECT * FROM user_stats ORDER BY wallet',
  settled_trades: 'SELECT * FROM settled_trades ORDER BY id',
  daily_pnl: 'SELECT * FROM daily_pnl ORDER BY wallet, day',
  user_achievements: 'SELECT * FROM user_achievements ORDER BY wallet, achievement_id',
  market_counts: 'SELECT * FROM market_counts ORDER BY state',
  market_list_blocks: 'SELECT * FROM market_list_blocks ORDER BY block, state',
  platform_totals: 'SELECT * FROM platform_totals',
  raw_events: 'SELECT * FROM raw_events ORDER BY signature, event_index',
  processed_transactions: 'SELECT * FROM processed_transactions ORDER BY signature',
  dead_letters: 'SELECT signature, event_index, slot, kind, reason, detail, data, source FROM dead_letters ORDER BY signature, event_index',
};

export async function tableDigests(db: Db): Promise<Record<string, { rows: number; md5: string }>> {
  const out: Record<string, { rows: number; md5: string }> = {};
  for (const [table, query] of Object.entries(PROJECTED_TABLES)) {
    const r = await db.one<{ rows: number; md5: string | null }>(
      `SELECT count(*)::int AS rows, md5(string_agg(row_to_json(t)::text, E'\\n')) AS md5 FROM (${query}) t`,
    );
    out[table] = { rows: r.rows, md5: r.md5 ?? '' };
  }
  return out;
}
