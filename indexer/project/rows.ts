/**
 * In-memory rows of the projected tables during one batch. Amounts are bigint, times Date,
 * row ids number (assigned from the cursor's id counters, safe far below 2^53).
 */
export interface MarketRow {
  id: number;
  address: string;
  marketId: bigint;
  oracleFeed: string | null;
  oracleFeedId: string | null;
  settlementMint: string;
  creator: string | null;
  durationSeconds: bigint | null;
  maxConfidenceRatioBps: number | null;
  state: number;
  outcome: number | null;
  tStart: Date;
  tEnd: Date;
  startPrice: bigint | null;
  startPriceConf: bigint | null;
  startPriceExpo: number | null;
  endPrice: bigint | null;
  endPriceConf: bigint | null;
  endPriceExpo: number | null;
  totalCollateral: bigint;
  totalYesShares: bigint;
  totalNoShares: bigint;
  totalVolume: bigint;
  totalTrades: number;
  totalPositions: number;
  bestBid: number | null;
  bestAsk: number | null;
  accumulatedCreatorFees: bigint;
  creatorFeesEarned: bigint;
  createdAt: Date;
  resolvedAt: Date | null;
  updatedAt: Date;
  createdSlot: number;
  createdSignature: string;
}

export interface OrderRow {
  id: number;
  marketAddress: string;
  orderId: bigint;
  owner: string;
  sideCode: number;
  priceBps: number;
  quantity: bigint;
  filledQuantity: bigint;
  statusCode: number;
  orderType: number;
  createdAt: Date;
  updatedAt: Date;
  createdSlot: number;
  txSignature: string;
}

export interface LevelRow {
  marketAddress: string;
  bookSide: number;
  priceBps: number;
  quantity: bigint;
  orders: number;
}

export interface PositionRow {
  id: number;
  address: string;
  marketAddress: string;
  owner: string;
  yesShares: bigint;
  noShares: bigint;
  collateralDeposited: bigint;
  totalBought: bigint;
  totalSold: bigint;
  feesPaid: bigint;
  yesCost: bigint;
  noCost: bigint;
  settled: boolean;
  payout: bigint;
  createdAt: Date;
  updatedAt: Date;
  settledAt: Date | null;
}

export interface TradeRow {
  id: number;
  marketAddress: string;
  makerOrderId: bigint;
  takerOrderId: bigint;
  maker: string;
  taker: string;
  makerSide: number;
  takerSide: number;
  priceBps: number;
  quantity: bigint;
  takerFee: bigint;
  feeProtocol: bigint;
  feeCreator: bigint;
  feeReferral: bigint;
  protocolTreasuryIndex: number;
  referrer: string | null;
  txSignature: string;
  eventIndex: number;
  slot: number;
  executedAt: Date;
}

export interface ReferralLockRow {
  wallet: string;
  referrer: string;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
  slot: number;
  txSignature: string;
}

export interface ReferrerEarningsRow {
  wallet: string;
  settlementMint: string;
  accumulated: bigint;
  totalEarned: bigint;
  totalClaimed: bigint;
  lastCreditAt: Date | null;
}

export interface TraderActivityRow {
  wallet: string;
  tradesCount: number;
  volume: bigint;
  marketsTraded: number;
  firstTradeAt: Date;
  lastTradeAt: Date;
}

export interface UserStatsRow {
  wallet: string;
  totalTrades: number;
  winningTrades: number;
  losingTrades: number;
  totalPnl: bigint;
  totalSize: bigint;
  bestTradePnl: bigint | null;
  worstTradePnl: bigint | null;
  currentStreak: number;
  longestStreak: number;
  updatedAt: Date;
}

export interface UserAchievementRow {
  wallet: string;
  achievementId: number;
  progress: number;
  unlockedAt: Date | null;
  updatedAt: Date;
}

export interface AchievementDef {
  id: number;
  code: string;
  metric: string;
  threshold: number;
}

/** Append-only rows, inserted as they are. */
export interface FeeConfigRow {
  id: number;
  feeCapBps: number;
  decayRateBps: number;
  protocolShareBps: number;
  creatorShareBps: number;
  referralShareBps: number;
  changedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface TickSizeRow {
  id: number;
  tickSizeBps: number;
  changedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface ReferrerCreditRow {
  id: number;
  referrer: string;
  referee: string;
  marketAddress: string;
  settlementMint: string;
  amount: bigint;
  creditedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface ReferrerClaimRow {
  id: number;
  wallet: string;
  settlementMint: string;
  tokenAccount: string;
  amount: bigint;
  claimedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface CreatorAccrualRow {
  id: number;
  marketAddress: string;
  creator: string;
  amount: bigint;
  accruedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface CreatorClaimRow {
  id: number;
  marketAddress: string;
  creator: string;
  creatorTokenAccount: string;
  caller: string;
  amount: bigint;
  claimedAt: Date;
  slot: number;
  txSignature: string;
  eventIndex: number;
}
export interface SettledTradeRow {
  id: number;
  wallet: string;
  marketAddress: string;
  marketId: bigint;
  side: 'yes' | 'no';
  shares: bigint;
  cost: bigint;
  payout: bigint;
  pnl: bigint;
  isWin: boolean;
  marketOutcome: number;
  settledAt: Date;
  tStart: Date;
  tEnd: Date;
  slot: number;
  txSignature: string;
}
export interface DailyPnlDelta {
  wallet: string;
  day: string;
  pnl: bigint;
}

/** Tables whose ids the projector assigns. */
export const ID_TABLES = [
  'markets',
  'orders',
  'trades',
  'positions',
  'fee_config_history',
  'tick_size_history',
  'referrer_credits',
  'referrer_claims',
  'creator_fee_accruals',
  'creator_fee_claims',
  'settled_trades',
] as const;
export type IdTable = (typeof ID_TABLES)[number];
