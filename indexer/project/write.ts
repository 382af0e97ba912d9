import type { IMain, ITask, ColumnSet } from 'pg-promise';
import type { BatchState } from './state';

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

type Writers = { [K in keyof typeof SPECS]: { cs: ColumnSet; suffix: string } };

/** Column sets and upsert clauses, built once per pg-promise root. */
export function createWriters(pgp: IMain): Writers {
  const out: Record<string, { cs: ColumnSet; suffix: string }> = {};
  for (const [key, spec] of Object.entries(SPECS) as [string, TableSpec][]) {
    const cs = new pgp.helpers.ColumnSet(
      spec.props.map((p) => ({ name: snake(p), prop: p })),
      { table: spec.table },
    );
    const suffix = spec.conflict
      ? ` ON CONFLICT (${spec.conflict.join(', ')}) DO UPDATE SET ${cs.assignColumns({ from: 'EXCLUDED', skip: spec.conflict })}`
      : '';
    out[key] = { cs, suffix };
  }
  // Daily P&L rows add up across batches instead of being read first.
  out.dailyPnl!.suffix = ' ON CONFLICT (wallet, day) DO UPDATE SET pnl = daily_pnl.pnl + EXCLUDED.pnl';
  return out as Writers;
}

/** Chunks keep each statement far below PostgreSQL's parameter-free but still finite limits. */
const CHUNK = 5_000;

async function write(t: ITask<unknown>, pgp: IMain, w: { cs: ColumnSet; suffix: string }, rows: object[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await t.none(pgp.helpers.insert(rows.slice(i, i + CHUNK), w.cs) + w.suffix);
  }
}

/**
 * Writes what the batch changed, parents before children (foreign keys): one multi-row
 * statement per table, never a round trip per row.
 */
export async function writeState(t: ITask<unknown>, pgp: IMain, writers: Writers, s: BatchState): Promise<void> {
  await write(t, pgp, writers.markets, s.markets.dirtyRows());
  await write(t, pgp, writers.orders, s.orders.dirtyRows());
  const levels = s.levels.dirtyRows();
  const emptied = levels.filter((l) => l.quantity === 0n);
  for (const l of levels) {
    if (l.quantity < 0n || l.orders < 0 || (l.quantity === 0n) !== (l.orders === 0)) {
      throw new Error(`order book level ${l.marketAddress}/${l.bookSide}/${l.priceBps} is inconsistent: ${l.quantity} in ${l.orders} orders`);
    }
  }
  if (emptied.length) {
    await t.none(
      `DELETE FROM orderbook_levels l USING unnest($1::text[], $2::smallint[], $3::int[]) AS k(m, s, p)
        WHERE l.market_address = k.m AND l.book_side = k.s AND l.price_bps = k.p`,
      [emptied.map((l) => l.marketAddress), emptied.map((l) => l.bookSide), emptied.map((l) => l.priceBps)],
    );
  }
  await write(t, pgp, writers.levels, levels.filter((l) => l.quantity > 0n));
  await write(t, pgp, writers.positions, s.positions.dirtyRows());
  await write(t, pgp, writers.trades, s.trades);
  await write(t, pgp, writers.feeConfigs, s.feeConfigs);
  await write(t, pgp, writers.tickSizes, s.tickSizes);
  await write(t, pgp, writers.locks, s.locks.dirtyRows());
  await write(t, pgp, writers.earnings, s.earnings.dirtyRows());
  await write(t, pgp, writers.referrerCredits, s.referrerCredits);
  await write(t, pgp, writers.referrerClaims, s.referrerClaims);
  await write(t, pgp, writers.creatorAccruals, s.creatorAccruals);
  await write(t, pgp, writers.creatorClaims, s.creatorClaims);
  await write(t, pgp, writers.activity, s.activity.dirtyRows());
  await write(t, pgp, writers.stats, s.stats.dirtyRows());
  await write(t, pgp, writers.userAchievements, s.userAchievements.dirtyRows());
  await write(t, pgp, writers.settledTrades, s.settledTrades);
  await write(t, pgp, writers.dailyPnl, [...s.dailyPnl.values()]);
}
