/**
 * Decoded events of the market program, field for field as core/events/idl.json declares
 * them (snake_case there, camelCase here). u64/i64 are bigint, pubkeys base58 strings,
 * `[u8; 32]` feed ids lowercase hex. Round-trip tests encode a sample of every kind, so a
 * drift between this file and the IDL fails the suite.
 */
export interface MarketInitialized {
  market: string;
  marketId: bigint;
  creator: string;
  oracleFeed: string | null;
  oracleFeedId: string;
  settlementMint: string;
  durationSeconds: bigint;
  tStart: bigint;
  tEnd: bigint;
  maxConfidenceRatioBps: number;
  initialCollateral: bigint;
}
export interface TradingStarted {
  market: string;
  startPrice: bigint;
  startPriceConf: bigint;
  startPriceExpo: number;
  publishTime: bigint;
}
export interface MarketSettling {
  market: string;
}
export interface MarketResolved {
  market: string;
  endPrice: bigint;
  endPriceConf: bigint;
  endPriceExpo: number;
  outcome: number;
  publishTime: bigint;
}
export interface MarketClosed {
  market: string;
}
export interface OrderPlaced {
  market: string;
  orderId: bigint;
  owner: string;
  side: number;
  priceBps: number;
  quantity: bigint;
  orderType: number;
}
export interface OrderFilled {
  market: string;
  makerOrderId: bigint;
  takerOrderId: bigint;
  maker: string;
  taker: string;
  makerPosition: string;
  takerPosition: string;
  makerSide: number;
  takerSide: number;
  /** Canonical YES price of the fill. */
  priceBps: number;
  quantity: bigint;
  takerFee: bigint;
  feeProtocol: bigint;
  feeCreator: bigint;
  feeReferral: bigint;
  protocolTreasuryIndex: number;
  referrer: string | null;
}
export interface OrderCancelled {
  market: string;
  orderId: bigint;
  owner: string;
  remainingQuantity: bigint;
}
export type OrderExpired = OrderCancelled;
export interface PositionSettled {
  market: string;
  owner: string;
  position: string;
  yesShares: bigint;
  noShares: bigint;
  payout: bigint;
}
export interface FeeConfigChanged {
  feeCapBps: number;
  decayRateBps: number;
  protocolShareBps: number;
  creatorShareBps: number;
  referralShareBps: number;
}
export interface TickSizeChanged {
  tickSizeBps: number;
}
export interface ReferralLocked {
  wallet: string;
  referrer: string;
  /** Unix seconds. */
  expiresAt: bigint;
}
export interface ReferrerCredited {
  referrer: string;
  referee: string;
  market: string;
  settlementMint: string;
  amount: bigint;
}
export interface ReferrerClaimed {
  referrer: string;
  settlementMint: string;
  tokenAccount: string;
  amount: bigint;
}
export interface CreatorFeesAccrued {
  market: string;
  creator: string;
  amount: bigint;
}
export interface CreatorFeesClaimed {
  market: string;
  creator: string;
  creatorTokenAccount: string;
  caller: string;
  amount: bigint;
}

export interface EventDataByKind {
  MarketInitialized: MarketInitialized;
  TradingStarted: TradingStarted;
  MarketSettling: MarketSettling;
  MarketResolved: MarketResolved;
  MarketClosed: MarketClosed;
  OrderPlaced: OrderPlaced;
  OrderFilled: OrderFilled;
  OrderCancelled: OrderCancelled;
  OrderExpired: OrderExpired;
  PositionSettled: PositionSettled;
  FeeConfigChanged: FeeConfigChanged;
  TickSizeChanged: TickSizeChanged;
  ReferralLocked: ReferralLocked;
  ReferrerCredited: ReferrerCredited;
  ReferrerClaimed: ReferrerClaimed;
  CreatorFeesAccrued: CreatorFeesAccrued;
  CreatorFeesClaimed: CreatorFeesClaimed;
}

export type EventKind = keyof EventDataByKind;

/** Discriminated union over every kind: `switch (e.kind)` narrows `e.data`. */
export type ProgramEvent = { [K in EventKind]: { kind: K; data: EventDataByKind[K] } }[EventKind];

export const EVENT_KINDS: readonly EventKind[] = [
  'MarketInitialized',
  'TradingStarted',
  'MarketSettling',
  'MarketResolved',
  'MarketClosed',
  'OrderPlaced',
  'OrderFilled',
  'OrderCancelled',
  'OrderExpired',
  'PositionSettled',
  'FeeConfigChanged',
  'TickSizeChanged',
  'ReferralLocked',
  'ReferrerCredited',
  'ReferrerClaimed',
  'CreatorFeesAccrued',
  'CreatorFeesClaimed',
];
