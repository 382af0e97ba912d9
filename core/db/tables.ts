import { col, defineTable, nullable } from './table';

/**
 * The projected tables of `db/migrations/0001_core_schema.sql`, one descriptor each (checked
 * against the migrated database by test/integration/table-descriptors.test.ts). The projector's
 * row types, writers and loader and the API's payload fields derive from these.
 */

const { int8, int4, int2, numeric, text, bool, timestamptz, date } = col;

export const markets = defineTable(
  'markets',
  {
    id: int8,
    address: text,
    marketId: numeric,
    oracleFeed: nullable(text),
    oracleFeedId: nullable(text),
    settlementMint: text,
    creator: nullable(text),
    durationSeconds: nullable(numeric),
    maxConfidenceRatioBps: nullable(int4),
    state: int2,
    outcome: nullable(int2),
    tStart: timestamptz,
    tEnd: timestamptz,
    startPrice: nullable(numeric),
    startPriceConf: nullable(numeric),
    startPriceExpo: nullable(int4),
    endPrice: nullable(numeric),
    endPriceConf: nullable(numeric),
    endPriceExpo: nullable(int4),
    totalCollateral: numeric,
    totalYesShares: numeric,
    totalNoShares: numeric,
    totalVolume: numeric,
    totalTrades: int8,
    totalPositions: int8,
    bestBid: nullable(int4),
    bestAsk: nullable(int4),
    accumulatedCreatorFees: numeric,
    creatorFeesEarned: numeric,
    createdAt: timestamptz,
    resolvedAt: nullable(timestamptz),
    updatedAt: timestamptz,
    createdSlot: int8,
    createdSignature: text,
  },
  { key: ['id'] },
);

export const orders = defineTable(
  'orders',
  {
    id: int8,
    marketAddress: text,
    orderId: numeric,
    owner: text,
    sideCode: int2,
    priceBps: int4,
    quantity: numeric,
    filledQuantity: numeric,
    statusCode: int2,
    orderType: int2,
    createdAt: timestamptz,
    updatedAt: timestamptz,
    createdSlot: int8,
    txSignature: text,
  },
  { key: ['id'] },
);

/** The aggregated YES book; `bookSide` 0 bid, 1 ask. */
export const orderbookLevels = defineTable(
  'orderbook_levels',
  { marketAddress: text, bookSide: int2, priceBps: int4, quantity: numeric, orders: int4 },
  { key: ['marketAddress', 'bookSide', 'priceBps'] },
);

export const positions = defineTable(
  'positions',
  {
    id: int8,
    address: text,
    marketAddress: text,
    owner: text,
    yesShares: numeric,
    noShares: numeric,
    collateralDeposited: numeric,
    totalBought: numeric,
    totalSold: numeric,
    feesPaid: numeric,
    yesCost: numeric,
    noCost: numeric,
    settled: bool,
    payout: numeric,
    createdAt: timestamptz,
    updatedAt: timestamptz,
    settledAt: nullable(timestamptz),
  },
  { key: ['id'] },
);

export const trades = defineTable('trades', {
  id: int8,
  marketAddress: text,
  makerOrderId: numeric,
  takerOrderId: numeric,
  maker: text,
  taker: text,
  makerSide: int2,
  takerSide: int2,
  priceBps: int4,
  quantity: numeric,
  takerFee: numeric,
  feeProtocol: numeric,
  feeCreator: numeric,
  feeReferral: numeric,
  protocolTreasuryIndex: int2,
  referrer: nullable(text),
  txSignature: text,
  eventIndex: int4,
  slot: int8,
  executedAt: timestamptz,
});

export const feeConfigHistory = defineTable('fee_config_history', {
  id: int8,
  feeCapBps: int4,
  decayRateBps: int4,
  protocolShareBps: int4,
  creatorShareBps: int4,
  referralShareBps: int4,
  changedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const tickSizeHistory = defineTable('tick_size_history', {
  id: int8,
  tickSizeBps: int4,
  changedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const referralLocks = defineTable(
  'referral_locks',
  { wallet: text, referrer: text, expiresAt: timestamptz, createdAt: timestamptz, updatedAt: timestamptz, slot: int8, txSignature: text },
  { key: ['wallet'] },
);

export const referrerEarnings = defineTable(
  'referrer_earnings',
  { wallet: text, settlementMint: text, accumulated: numeric, totalEarned: numeric, totalClaimed: numeric, lastCreditAt: nullable(timestamptz) },
  { key: ['wallet', 'settlementMint'] },
);

export const referrerCredits = defineTable('referrer_credits', {
  id: int8,
  referrer: text,
  referee: text,
  marketAddress: text,
  settlementMint: text,
  amount: numeric,
  creditedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const referrerClaims = defineTable('referrer_claims', {
  id: int8,
  wallet: text,
  settlementMint: text,
  tokenAccount: text,
  amount: numeric,
  claimedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const creatorFeeAccruals = defineTable('creator_fee_accruals', {
  id: int8,
  marketAddress: text,
  creator: text,
  amount: numeric,
  accruedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const creatorFeeClaims = defineTable('creator_fee_claims', {
  id: int8,
  marketAddress: text,
  creator: text,
  creatorTokenAccount: text,
  caller: text,
  amount: numeric,
  claimedAt: timestamptz,
  slot: int8,
  txSignature: text,
  eventIndex: int4,
});

export const traderActivity = defineTable(
  'trader_activity',
  { wallet: text, tradesCount: int8, volume: numeric, marketsTraded: int4, firstTradeAt: timestamptz, lastTradeAt: timestamptz },
  { key: ['wallet'] },
);

export const userStats = defineTable(
  'user_stats',
  {
    wallet: text,
    totalTrades: int4,
    winningTrades: int4,
    losingTrades: int4,
    totalPnl: numeric,
    totalSize: numeric,
    bestTradePnl: nullable(numeric),
    worstTradePnl: nullable(numeric),
    currentStreak: int4,
    longestStreak: int4,
    updatedAt: timestamptz,
  },
  { key: ['wallet'] },
);

export const userAchievements = defineTable(
  'user_achievements',
  { wallet: text, achievementId: int4, progress: int4, unlockedAt: nullable(timestamptz), updatedAt: timestamptz },
  { key: ['wallet', 'achievementId'] },
);

export const settledTrades = defineTable('settled_trades', {
  id: int8,
  wallet: text,
  marketAddress: text,
  marketId: numeric,
  side: col.textOf<'yes' | 'no'>(),
  shares: numeric,
  cost: numeric,
  payout: numeric,
  pnl: numeric,
  isWin: bool,
  marketOutcome: int2,
  settledAt: timestamptz,
  tStart: timestamptz,
  tEnd: timestamptz,
  slot: int8,
  txSignature: text,
});

/** A wallet's P&L per UTC day; the projector adds each batch's delta to the stored figure. */
export const dailyPnl = defineTable('daily_pnl', { wallet: text, day: date, pnl: numeric }, { key: ['wallet', 'day'] });

/** Every projected table, in the order foreign keys allow them to be written. */
export const PROJECTED = {
  markets,
  orders,
  orderbookLevels,
  positions,
  trades,
  feeConfigHistory,
  tickSizeHistory,
  referralLocks,
  referrerEarnings,
  referrerCredits,
  referrerClaims,
  creatorFeeAccruals,
  creatorFeeClaims,
  traderActivity,
  userStats,
  userAchievements,
  settledTrades,
  dailyPnl,
};

/**
 * Oracle prices (migration 0008, D-150): the aggregates read from the markets' Pyth price
 * accounts, and their one-minute candles. Written by the indexer's oracle poll, not the
 * projector.
 */
export const oracleObservations = defineTable(
  'oracle_observations',
  {
    feed: text,
    pubSlot: int8,
    publishTime: timestamptz,
    price: numeric,
    conf: numeric,
    expo: int4,
    status: int2,
    emaPrice: numeric,
    emaConf: numeric,
  },
  { key: ['feed', 'pubSlot'] },
);

export const oracleCandles1m = defineTable(
  'oracle_candles_1m',
  {
    feed: text,
    bucket: timestamptz,
    open: numeric,
    high: numeric,
    low: numeric,
    close: numeric,
    expo: int4,
    openSlot: int8,
    closeSlot: int8,
    observations: int4,
  },
  { key: ['feed', 'bucket'] },
);

/** API keys (migration 0008, D-153): written by `npm run keys`, read by the plan limiter. */
export const apiKeys = defineTable(
  'api_keys',
  {
    keyId: text,
    tenant: text,
    keyHash: text,
    plan: text,
    label: nullable(text),
    createdAt: timestamptz,
    revokedAt: nullable(timestamptz),
  },
  { key: ['keyId'] },
);

/** Tables with a descriptor that the projector does not write. */
export const DESCRIBED_OTHER = { oracleObservations, oracleCandles1m, apiKeys };
