import { MarketState, Outcome, Side } from '../../core/domain';
import { formatScaled } from '../../core/oracle/pyth';
import type { DbRow } from './queries/rows';

/** The appendix's side names, by side code. */
export const SIDE_LABELS_LEGACY: Record<number, 'BuyYes' | 'SellYes' | 'BuyNo' | 'SellNo'> = {
  [Side.BuyYes]: 'BuyYes',
  [Side.SellYes]: 'SellYes',
  [Side.BuyNo]: 'BuyNo',
  [Side.SellNo]: 'SellNo',
};

/**
 * Row → payload conversions of the appendix variant (D-157): times in Unix seconds, amounts
 * as decimal strings, prices of the oracle scaled by their exponent, codes as the appendix
 * names them. Fields the indexed data cannot supply are null, never made up.
 */
const secs = (v: unknown): number | null => (v instanceof Date ? Math.floor(v.getTime() / 1000) : v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string => String(v);
const scaled = (price: unknown, expo: unknown): string | null => (price === null || price === undefined ? null : formatScaled(BigInt(String(price)), Number(expo ?? 0)));

/** The appendix's four states; Pending reads as CREATED, Closed (resolved, then closed) as RESOLVED. */
export const LEGACY_STATES = ['CREATED', 'CREATED', 'TRADING', 'SETTLING', 'RESOLVED', 'RESOLVED'] as const;
export type LegacyState = 'CREATED' | 'TRADING' | 'SETTLING' | 'RESOLVED';
/** The program states each appendix state covers (the `state` filters). */
export const STATES_OF: Record<LegacyState, number[]> = {
  CREATED: [MarketState.Pending, MarketState.Created],
  TRADING: [MarketState.Trading],
  SETTLING: [MarketState.Settling],
  RESOLVED: [MarketState.Resolved, MarketState.Closed],
};

/** UP for YES, DOWN for NO; a void market (refunded) has neither: null. */
export const legacyOutcome = (o: unknown): 'UP' | 'DOWN' | null => (o === Outcome.Yes ? 'UP' : o === Outcome.No ? 'DOWN' : null);

export function legacyMarket(m: DbRow) {
  return {
    id: str(m.address),
    marketId: str(m.market_id),
    pythFeed: (m.oracle_feed as string | null) ?? null,
    settlementMint: str(m.settlement_mint),
    tStart: secs(m.t_start),
    tEnd: secs(m.t_end),
    startPrice: scaled(m.start_price, m.start_price_expo),
    endPrice: scaled(m.end_price, m.end_price_expo),
    outcome: legacyOutcome(m.outcome),
    totalYesShares: str(m.total_yes_shares),
    totalNoShares: str(m.total_no_shares),
    totalCollateral: str(m.total_collateral),
    totalVolume: str(m.total_volume),
    state: LEGACY_STATES[Number(m.state)]!,
    createdAt: secs(m.created_at),
    updatedAt: secs(m.updated_at),
  };
}

export const legacyCurrentMarket = (m: DbRow) => ({ ...legacyMarket(m), bestBid: (m.best_bid as number | null) ?? null, bestAsk: (m.best_ask as number | null) ?? null });

export function legacyOrder(o: DbRow) {
  const status = Number(o.status_code);
  return {
    orderId: str(o.order_id),
    owner: str(o.owner),
    side: SIDE_LABELS_LEGACY[Number(o.side_code)]!,
    priceBps: Number(o.price_bps),
    quantity: (BigInt(str(o.quantity)) - BigInt(str(o.filled_quantity))).toString(),
    originalQuantity: str(o.quantity),
    timestamp: secs(o.created_at),
    // Resting: open, pending_cancel, cancel_failed.
    isActive: status === 0 || status === 4 || status === 5,
  };
}

export function legacyPosition(p: DbRow) {
  return {
    market: str(p.market_address),
    owner: str(p.owner),
    yesShares: str(p.yes_shares),
    noShares: str(p.no_shares),
    lockedYesShares: str(p.locked_yes),
    lockedNoShares: str(p.locked_no),
    collateralDeposited: str(p.collateral_deposited),
    // The program's escrow of resting buy orders is not in its events.
    collateralLocked: null,
    settled: Boolean(p.settled),
    payout: str(p.payout),
    totalBought: str(p.total_bought),
    totalSold: str(p.total_sold),
    totalFeesPaid: str(p.fees_paid),
    // The program pays makers no rebate (its fee goes to protocol, creator and referrer).
    totalRebatesEarned: '0',
    orderCount: Number(p.order_count),
    createdAt: secs(p.created_at),
    updatedAt: secs(p.updated_at),
  };
}

export function legacyTrade(t: DbRow) {
  return {
    id: str(t.id),
    marketId: t.market_id === null || t.market_id === undefined ? null : str(t.market_id),
    takerOrderId: str(t.taker_order_id),
    makerOrderId: str(t.maker_order_id),
    taker: str(t.taker),
    maker: str(t.maker),
    side: SIDE_LABELS_LEGACY[Number(t.taker_side)]!,
    priceBps: Number(t.price_bps),
    quantity: str(t.quantity),
    takerFee: str(t.taker_fee),
    makerRebate: '0',
    timestamp: secs(t.executed_at),
    signature: str(t.tx_signature),
  };
}
