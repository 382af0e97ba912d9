import type { Db } from '../../core/db';
import type { Truth } from '../../simulator/truth';

type Row = Record<string, unknown>;

async function compare(db: Db, truthRows: Row[], query: string, key: (r: Row) => string): Promise<string[]> {
  const actual = new Map((await db.any<Row>(query)).map((r) => [key(r), r]));
  const problems: string[] = [];
  for (const t of truthRows) {
    const k = key(t);
    const a = actual.get(k);
    if (!a) problems.push(`missing ${k}`);
    else if (JSON.stringify(a) !== JSON.stringify(t)) problems.push(`differs ${k}: expected ${JSON.stringify(t)} got ${JSON.stringify(a)}`);
    actual.delete(k);
  }
  for (const k of actual.keys()) problems.push(`unexpected ${k}`);
  return problems;
}

/** Compares every projected table with the simulator's ground truth; returns the differences per table. */
export async function compareWithTruth(db: Db, truth: Truth): Promise<Record<string, string[]>> {
  const cols = (row: Row | undefined) => (row ? Object.keys(row).join(', ') : '*');
  const out: Record<string, string[]> = {};
  out.markets = await compare(
    db,
    truth.markets,
    `SELECT address, market_id, state, outcome, start_price, end_price, total_volume, total_trades::text, total_positions::text,
            total_yes_shares, total_no_shares, best_bid, best_ask, accumulated_creator_fees, creator_fees_earned FROM markets`,
    (r) => String(r.address),
  );
  out.orders = await compare(db, truth.orders, `SELECT ${cols(truth.orders[0])} FROM orders`, (r) => `${r.market_address}:${r.order_id}`);
  out.orderbook_levels = await compare(db, truth.levels, `SELECT ${cols(truth.levels[0])} FROM orderbook_levels`, (r) => `${r.market_address}:${r.book_side}:${r.price_bps}`);
  out.positions = await compare(db, truth.positions, `SELECT ${cols(truth.positions[0])} FROM positions`, (r) => String(r.address));
  out.trades = await compare(
    db,
    truth.trades,
    `SELECT ${cols(truth.trades[0])} FROM trades`,
    (r) => `${r.market_address}:${r.maker_order_id}:${r.taker_order_id}:${r.event_index}`,
  );
  out.referral_locks = await compare(db, truth.referralLocks, 'SELECT wallet, referrer FROM referral_locks', (r) => String(r.wallet));
  out.referrer_earnings = await compare(
    db,
    truth.referrerEarnings,
    'SELECT wallet, settlement_mint, accumulated, total_earned, total_claimed FROM referrer_earnings',
    (r) => `${r.wallet}:${r.settlement_mint}`,
  );
  out.user_stats = await compare(
    db,
    truth.userStats,
    'SELECT wallet, total_trades, winning_trades, losing_trades, total_pnl FROM user_stats',
    (r) => String(r.wallet),
  );
  out.creator_fee_claims = await compare(
    db,
    truth.creatorClaims,
    'SELECT market_address, amount, tx_signature FROM creator_fee_claims',
    (r) => String(r.tx_signature),
  );
  const counts = await db.one<{ fee: number; tick: number; events: number }>(
    `SELECT (SELECT count(*)::int FROM fee_config_history) AS fee, (SELECT count(*)::int FROM tick_size_history) AS tick,
            (SELECT count(*)::int FROM raw_events) AS events`,
  );
  out.counts = [];
  if (counts.fee !== truth.feeConfigChanges) out.counts.push(`fee config rows ${counts.fee} != ${truth.feeConfigChanges}`);
  if (counts.tick !== truth.tickSizeChanges) out.counts.push(`tick size rows ${counts.tick} != ${truth.tickSizeChanges}`);
  if (counts.events !== truth.events) out.counts.push(`raw events ${counts.events} != ${truth.events}`);
  out.counts.push(...(await marketCountDrift(db)));
  // The maintained platform totals equal the sums over the tables they summarize.
  const totals = await db.one<Record<string, string>>(
    `SELECT to_jsonb(p)::text AS kept, jsonb_build_object(
              'id', 1,
              'total_volume', (SELECT COALESCE(sum(total_volume), 0) FROM markets),
              'total_trades', (SELECT COALESCE(sum(total_trades), 0) FROM markets),
              'total_positions', (SELECT COALESCE(sum(total_positions), 0) FROM markets),
              'unique_traders', (SELECT count(*) FROM trader_activity),
              'protocol_fees', (SELECT COALESCE(sum(fee_protocol), 0) FROM trades),
              'creator_fees', (SELECT COALESCE(sum(creator_fees_earned), 0) FROM markets))::text AS summed
       FROM platform_totals p`,
  );
  if (totals.kept !== totals.summed) out.counts.push(`platform_totals ${totals.kept} != ${totals.summed}`);
  for (const k of Object.keys(out)) if (!out[k]!.length) delete out[k];
  return out;
}

/**
 * Where the maintained market counts differ from a count over `markets`: per state
 * (market_counts) and per block and state (market_list_blocks, D-130), where every block that
 * holds a market has a row for every state. Empty when they agree.
 */
export async function marketCountDrift(db: Pick<Db, 'any'>): Promise<string[]> {
  const out: string[] = [];
  const drift = await db.any(
    `SELECT c.state, c.n::int AS counted, COALESCE(m.n, 0)::int AS actual FROM market_counts c
       LEFT JOIN (SELECT state, count(*) AS n FROM markets GROUP BY state) m ON m.state = c.state WHERE c.n <> COALESCE(m.n, 0)`,
  );
  for (const d of drift) out.push(`market_counts[${d.state}] ${d.counted} != ${d.actual}`);
  const blockDrift = await db.any(
    `SELECT COALESCE(k.block, a.block) AS block, COALESCE(k.state, a.state) AS state, k.n::int AS counted, a.n::int AS actual
       FROM market_list_blocks k
       FULL JOIN (SELECT b.block, s.state, count(m.id) AS n
                    FROM (SELECT DISTINCT market_list_block(market_id) AS block FROM markets) b CROSS JOIN market_counts s
                    LEFT JOIN markets m ON market_list_block(m.market_id) = b.block AND m.state = s.state
                   GROUP BY b.block, s.state) a ON a.block = k.block AND a.state = k.state
      WHERE k.n IS DISTINCT FROM a.n`,
  );
  for (const d of blockDrift) out.push(`market_list_blocks[${d.block}/${d.state}] ${d.counted} != ${d.actual}`);
  return out;
}
