import type { ITask } from 'pg-promise';
import { pgBinaryArray, type BinaryElementType } from './pg-binary';
import type { BatchState, Table } from './state';

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface TableSpec {
  table: string;
  props: string[];
  /** Conflict target for upserts; absent for append-only tables. */
  conflict?: string[];
}

const SPECS = {
  markets: {
    table: 'markets',
    conflict: ['id'],
    props: [
      'id', 'address', 'marketId', 'oracleFeed', 'oracleFeedId', 'settlementMint', 'creator', 'durationSeconds',
      'maxConfidenceRatioBps', 'state', 'outcome', 'tStart', 'tEnd', 'startPrice', 'startPriceConf', 'startPriceExpo',
      'endPrice', 'endPriceConf', 'endPriceExpo', 'totalCollateral', 'totalYesShares', 'totalNoShares', 'totalVolume',
      'totalTrades', 'totalPositions', 'bestBid', 'bestAsk', 'accumulatedCreatorFees', 'creatorFeesEarned', 'createdAt',
      'resolvedAt', 'updatedAt', 'createdSlot', 'createdSignature',
    ],
  },
  orders: {
    table: 'orders',
    conflict: ['id'],
    props: [
      'id', 'marketAddress', 'orderId', 'owner', 'sideCode', 'priceBps', 'quantity', 'filledQuantity', 'statusCode',
      'orderType', 'createdAt', 'updatedAt', 'createdSlot', 'txSignature',
    ],
  },
  levels: {
    table: 'orderbook_levels',
    conflict: ['market_address', 'book_side', 'price_bps'],
    props: ['marketAddress', 'bookSide', 'priceBps', 'quantity', 'orders'],
  },
  positions: {
    table: 'positions',
    conflict: ['id'],
    props: [
      'id', 'address', 'marketAddress', 'owner', 'yesShares', 'noShares', 'collateralDeposited', 'totalBought', 'totalSold',
      'feesPaid', 'yesCost', 'noCost', 'settled', 'payout', 'createdAt', 'updatedAt', 'settledAt',
    ],
  },
  trades: {
    table: 'trades',
    props: [
      'id', 'marketAddress', 'makerOrderId', 'takerOrderId', 'maker', 'taker', 'makerSide', 'takerSide', 'priceBps',
      'quantity', 'takerFee', 'feeProtocol', 'feeCreator', 'feeReferral', 'protocolTreasuryIndex', 'referrer',
      'txSignature', 'eventIndex', 'slot', 'executedAt',
    ],
  },
  feeConfigs: {
    table: 'fee_config_history',
    props: [
      'id', 'feeCapBps', 'decayRateBps', 'protocolShareBps', 'creatorShareBps', 'referralShareBps', 'changedAt', 'slot',
      'txSignature', 'eventIndex',
    ],
  },
  tickSizes: { table: 'tick_size_history', props: ['id', 'tickSizeBps', 'changedAt', 'slot', 'txSignature', 'eventIndex'] },
  locks: {
    table: 'referral_locks',
    conflict: ['wallet'],
    props: ['wallet', 'referrer', 'expiresAt', 'createdAt', 'updatedAt', 'slot', 'txSignature'],
  },
  earnings: {
    table: 'referrer_earnings',
    conflict: ['wallet', 'settlement_mint'],
    props: ['wallet', 'settlementMint', 'accumulated', 'totalEarned', 'totalClaimed', 'lastCreditAt'],
  },
  referrerCredits: {
    table: 'referrer_credits',
    props: ['id', 'referrer', 'referee', 'marketAddress', 'settlementMint', 'amount', 'creditedAt', 'slot', 'txSignature', 'eventIndex'],
  },
  referrerClaims: {
    table: 'referrer_claims',
    props: ['id', 'wallet', 'settlementMint', 'tokenAccount', 'amount', 'claimedAt', 'slot', 'txSignature', 'eventIndex'],
  },
  creatorAccruals: {
    table: 'creator_fee_accruals',
    props: ['id', 'marketAddress', 'creator', 'amount', 'accruedAt', 'slot', 'txSignature', 'eventIndex'],
  },
  creatorClaims: {
    table: 'creator_fee_claims',
    props: ['id', 'marketAddress', 'creator', 'creatorTokenAccount', 'caller', 'amount', 'claimedAt', 'slot', 'txSignature', 'eventIndex'],
  },
  activity: {
    table: 'trader_activity',
    conflict: ['wallet'],
    props: ['wallet', 'tradesCount', 'volume', 'marketsTraded', 'firstTradeAt', 'lastTradeAt'],
  },
  stats: {
    table: 'user_stats',
    conflict: ['wallet'],
    props: [
      'wallet', 'totalTrades', 'winningTrades', 'losingTrades', 'totalPnl', 'totalSize', 'bestTradePnl', 'worstTradePnl',
      'currentStreak', 'longestStreak', 'updatedAt',
    ],
  },
  userAchievements: {
    table: 'user_achievements',
    conflict: ['wallet', 'achievement_id'],
    props: ['wallet', 'achievementId', 'progress', 'unlockedAt', 'updatedAt'],
  },
  settledTrades: {
    table: 'settled_trades',
    props: [
      'id', 'wallet', 'marketAddress', 'marketId', 'side', 'shares', 'cost', 'payout', 'pnl', 'isWin', 'marketOutcome',
      'settledAt', 'tStart', 'tEnd', 'slot', 'txSignature',
    ],
  },
  dailyPnl: { table: 'daily_pnl', props: ['wallet', 'day', 'pnl'] },
} satisfies Record<string, TableSpec>;

/** SQL type of every column, for the typed unnest() arrays. */
const TYPES: Record<string, string> = {
  id: 'bigint', address: 'text', market_id: 'numeric', oracle_feed: 'text', oracle_feed_id: 'text', settlement_mint: 'text',
  creator: 'text', duration_seconds: 'numeric', max_confidence_ratio_bps: 'int', state: 'smallint', outcome: 'smallint',
  t_start: 'timestamptz', t_end: 'timestamptz', start_price: 'numeric', start_price_conf: 'numeric', start_price_expo: 'int',
  end_price: 'numeric', end_price_conf: 'numeric', end_price_expo: 'int', total_collateral: 'numeric', total_yes_shares: 'numeric',
  total_no_shares: 'numeric', total_volume: 'numeric', total_trades: 'bigint', total_positions: 'bigint', best_bid: 'int',
  best_ask: 'int', accumulated_creator_fees: 'numeric', creator_fees_earned: 'numeric', created_at: 'timestamptz',
  resolved_at: 'timestamptz', updated_at: 'timestamptz', created_slot: 'bigint', created_signature: 'text',
  market_address: 'text', order_id: 'numeric', owner: 'text', side_code: 'smallint', price_bps: 'int', quantity: 'numeric',
  filled_quantity: 'numeric', status_code: 'smallint', order_type: 'smallint', tx_signature: 'text', book_side: 'smallint',
  orders: 'int', yes_shares: 'numeric', no_shares: 'numeric', collateral_deposited: 'numeric', total_bought: 'numeric',
  total_sold: 'numeric', fees_paid: 'numeric', yes_cost: 'numeric', no_cost: 'numeric', settled: 'boolean', payout: 'numeric',
  settled_at: 'timestamptz', maker_order_id: 'numeric', taker_order_id: 'numeric', maker: 'text', taker: 'text',
  maker_side: 'smallint', taker_side: 'smallint', taker_fee: 'numeric', fee_protocol: 'numeric', fee_creator: 'numeric',
  fee_referral: 'numeric', protocol_treasury_index: 'smallint', referrer: 'text', event_index: 'int', slot: 'bigint',
  executed_at: 'timestamptz', fee_cap_bps: 'int', decay_rate_bps: 'int', protocol_share_bps: 'int', creator_share_bps: 'int',
  referral_share_bps: 'int', changed_at: 'timestamptz', tick_size_bps: 'int', wallet: 'text', expires_at: 'timestamptz',
  accumulated: 'numeric', total_earned: 'numeric', total_claimed: 'numeric', last_credit_at: 'timestamptz', referee: 'text',
  amount: 'numeric', credited_at: 'timestamptz', token_account: 'text', claimed_at: 'timestamptz', accrued_at: 'timestamptz',
  creator_token_account: 'text', caller: 'text', trades_count: 'bigint', volume: 'numeric', markets_traded: 'int',
  first_trade_at: 'timestamptz', last_trade_at: 'timestamptz', winning_trades: 'int',
  losing_trades: 'int', total_pnl: 'numeric', total_size: 'numeric', best_trade_pnl: 'numeric', worst_trade_pnl: 'numeric',
  current_streak: 'int', longest_streak: 'int', achievement_id: 'int', progress: 'int', unlocked_at: 'timestamptz',
  side: 'text', shares: 'numeric', cost: 'numeric', pnl: 'numeric', is_win: 'boolean', market_outcome: 'smallint', day: 'date',
};

export interface Writer {
  /** Inserts; for tables with a conflict target, an upsert. */
  sql: string;
  /** A plain insert, for rows the batch created (known not to exist). */
  insertSql: string;
  props: string[];
  /** Per prop: its array's binary element type. */
  binary: BinaryElementType[];
}

/** The element type of each SQL type of TYPES in PostgreSQL's binary array format (D-60). */
const BINARY: Record<string, BinaryElementType> = {
  bigint: 'int8', int: 'int4', smallint: 'int2', boolean: 'bool', text: 'text', timestamptz: 'timestamptz', bytea: 'bytea',
  numeric: 'numeric', date: 'date',
};
type Writers = { [K in keyof typeof SPECS]: Writer };

/**
 * Multi-row statements as `INSERT ... SELECT * FROM unnest($1::type[], ...)` with bound
 * parameters: one round trip per table and batch, no per-row SQL text to build or parse.
 */
export function createWriters(): Writers {
  const out: Record<string, Writer> = {};
  for (const [key, spec] of Object.entries(SPECS) as [string, TableSpec][]) {
    const cols = spec.props.map(snake);
    const types = cols.map((c) => {
      const type = spec.table === 'user_stats' && c === 'total_trades' ? 'int' : TYPES[c];
      if (!type || !BINARY[type]) throw new Error(`no SQL type for ${spec.table}.${c}`);
      return type;
    });
    const arrays = types.map((type, i) => `$${i + 1}::${type}[]`);
    const insertSql = `INSERT INTO ${spec.table} (${cols.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})`;
    let sql = insertSql;
    if (spec.conflict) {
      const updates = cols.filter((c) => !spec.conflict!.includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
      sql += ` ON CONFLICT (${spec.conflict.join(', ')}) DO UPDATE SET ${updates.join(', ')}`;
    }
    out[key] = { sql, insertSql, props: spec.props, binary: types.map((type) => BINARY[type]!) };
  }
  // Daily P&L rows add up across batches instead of being read first.
  out.dailyPnl!.sql = out.dailyPnl!.sql.replace(/ON CONFLICT.*$/, '') + ' ON CONFLICT (wallet, day) DO UPDATE SET pnl = daily_pnl.pnl + EXCLUDED.pnl';
  return out as Writers;
}

export interface Statement {
  text: string;
  values: unknown[];
}

function* upsert(w: Writer, rows: object[], sql = w.sql): Generator<Statement> {
  if (!rows.length) return;
  const rs = rows as Record<string, unknown>[];
  yield { text: sql, values: w.props.map((p, i) => pgBinaryArray(rs, w.binary[i]!, (r) => r[p])) };
}

/**
 * A table's changed rows: those the batch created with a plain insert, which skips the
 * conflict check an upsert makes per row (the loader looked for them and found none), and the
 * others with the upsert.
 */
function* changed<R extends object>(w: Writer, table: Table<string, R>, keep: (row: R) => boolean = () => true): Generator<Statement> {
  const created: R[] = [];
  const existing: R[] = [];
  for (const key of table.dirty) {
    const row = table.rows.get(key)!;
    if (keep(row)) (table.created.has(key) ? created : existing).push(row);
  }
  yield* upsert(w, created, w.insertSql);
  yield* upsert(w, existing);
}

/**
 * The batch's writes, parents before children (foreign keys): one multi-row statement per
 * table, encoded one at a time so that a caller can yield to the event loop in between.
 */
export function* writeStatements(writers: Writers, s: BatchState): Generator<Statement> {
  yield* changed(writers.markets, s.markets);
  yield* changed(writers.orders, s.orders);
  const levels = s.levels.dirtyRows();
  const emptied = levels.filter((l) => l.quantity === 0n);
  for (const l of levels) {
    if (l.quantity < 0n || l.orders < 0 || (l.quantity === 0n) !== (l.orders === 0)) {
      throw new Error(`order book level ${l.marketAddress}/${l.bookSide}/${l.priceBps} is inconsistent: ${l.quantity} in ${l.orders} orders`);
    }
  }
  if (emptied.length) {
    yield {
      text: `DELETE FROM orderbook_levels l USING unnest($1::text[], $2::smallint[], $3::int[]) AS k(m, s, p)
              WHERE l.market_address = k.m AND l.book_side = k.s AND l.price_bps = k.p`,
      values: [
        pgBinaryArray(emptied, 'text', (l) => l.marketAddress),
        pgBinaryArray(emptied, 'int2', (l) => l.bookSide),
        pgBinaryArray(emptied, 'int4', (l) => l.priceBps),
      ],
    };
  }
  yield* changed(writers.levels, s.levels, (l) => l.quantity > 0n);
  yield* changed(writers.positions, s.positions);
  yield* upsert(writers.trades, s.trades);
  yield* upsert(writers.feeConfigs, s.feeConfigs);
  yield* upsert(writers.tickSizes, s.tickSizes);
  yield* changed(writers.locks, s.locks);
  yield* changed(writers.earnings, s.earnings);
  yield* upsert(writers.referrerCredits, s.referrerCredits);
  yield* upsert(writers.referrerClaims, s.referrerClaims);
  yield* upsert(writers.creatorAccruals, s.creatorAccruals);
  yield* upsert(writers.creatorClaims, s.creatorClaims);
  yield* changed(writers.activity, s.activity);
  yield* changed(writers.stats, s.stats);
  yield* changed(writers.userAchievements, s.userAchievements);
  yield* upsert(writers.settledTrades, s.settledTrades);
  yield* upsert(writers.dailyPnl, [...s.dailyPnl.values()]);
  const counts = [...s.stateCounts].filter(([, d]) => d !== 0);
  if (counts.length) {
    yield {
      text: 'UPDATE market_counts c SET n = c.n + d.delta FROM unnest($1::smallint[], $2::bigint[]) AS d(state, delta) WHERE c.state = d.state',
      values: [pgBinaryArray(counts, 'int2', ([st]) => st), pgBinaryArray(counts, 'int8', ([, d]) => d)],
    };
  }
  const p = s.platform;
  if (p.trades || p.positions || p.traders || p.creatorFees) {
    yield {
      text: `UPDATE platform_totals SET total_volume = total_volume + $1::numeric, total_trades = total_trades + $2::bigint,
               total_positions = total_positions + $3::bigint, unique_traders = unique_traders + $4::bigint,
               protocol_fees = protocol_fees + $5::numeric, creator_fees = creator_fees + $6::numeric`,
      values: [p.volume.toString(), p.trades, p.positions, p.traders, p.protocolFees.toString(), p.creatorFees.toString()],
    };
  }
}

/**
 * Several data-modifying statements as one: all but the last become `WITH` queries, which
 * PostgreSQL runs to completion whether or not the last reads them, and their parameters are
 * renumbered. One round trip instead of one per statement; foreign keys are still checked, at
 * the end of the statement. The statements must not touch the same rows (they all see one
 * snapshot), which holds for the projector's: a table's created and changed rows are
 * different rows, and so are the order book levels it deletes and writes.
 */
export function combineStatements(statements: Statement[]): Statement {
  if (statements.length === 1) return statements[0]!;
  const values: unknown[] = [];
  const texts = statements.map((q) => {
    const offset = values.length;
    values.push(...q.values);
    return offset ? q.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`) : q.text;
  });
  const last = texts.pop()!;
  return { text: `WITH ${texts.map((t, i) => `w${i} AS (${t})`).join(',\n')}\n${last}`, values };
}

/**
 * Writes what the batch changed, never a round trip per row. The statements run one after
 * the other (pg deprecates queueing queries on a busy client).
 */
export async function writeState(t: ITask<unknown>, writers: Writers, s: BatchState): Promise<void> {
  for (const q of writeStatements(writers, s)) await t.none(q as never);
}
