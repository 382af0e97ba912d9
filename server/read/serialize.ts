/** Row → API payload conversions: amounts as decimal strings, times ISO, ints as numbers. */
type Row = Record<string, unknown>;

export const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : v === null || v === undefined ? null : String(v));
export const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
export const int = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Fields every market payload shares: identity, window, and the oracle prices. */
function marketCore(r: Row) {
  return {
    id: Number(r.id),
    address: r.address as string,
    marketId: String(r.market_id),
    oracleFeed: str(r.oracle_feed),
    tStart: iso(r.t_start),
    tEnd: iso(r.t_end),
    startPrice: str(r.start_price),
    startPriceConf: str(r.start_price_conf),
    startPriceExpo: int(r.start_price_expo),
    endPrice: str(r.end_price),
    endPriceConf: str(r.end_price_conf),
    endPriceExpo: int(r.end_price_expo),
    state: Number(r.state),
    outcome: int(r.outcome),
    totalVolume: String(r.total_volume),
    totalTrades: Number(r.total_trades),
    totalPositions: Number(r.total_positions),
  };
}

export function marketListItem(r: Row) {
  return {
    ...marketCore(r),
    oracleFeedId: str(r.oracle_feed_id),
    creator: str(r.creator),
    durationSeconds: str(r.duration_seconds),
    maxConfidenceRatioBps: int(r.max_confidence_ratio_bps),
    bestBid: int(r.best_bid),
    bestAsk: int(r.best_ask),
  };
}

export function currentMarket(r: Row) {
  return {
    ...marketCore(r),
    settlementMint: r.settlement_mint as string,
    totalYesShares: String(r.total_yes_shares),
    totalNoShares: String(r.total_no_shares),
    createdAt: iso(r.created_at),
    resolvedAt: iso(r.resolved_at),
    // Deprecated by the spec and frozen at its create-time value.
    totalCollateral: String(r.total_collateral),
  };
}

export function trade(r: Row) {
  return {
    id: Number(r.id),
    market_address: r.market_address as string,
    maker_order_id: String(r.maker_order_id),
    taker_order_id: String(r.taker_order_id),
    maker: r.maker as string,
    taker: r.taker as string,
    price_bps: Number(r.price_bps),
    quantity: String(r.quantity),
    maker_side: Number(r.maker_side),
    taker_fee: String(r.taker_fee),
    fee_protocol: String(r.fee_protocol),
    fee_creator: String(r.fee_creator),
    fee_referral: String(r.fee_referral),
    protocol_treasury_index: Number(r.protocol_treasury_index),
    treasury_index: Number(r.protocol_treasury_index),
    tx_signature: r.tx_signature as string,
    signature: r.tx_signature as string,
    slot: Number(r.slot),
    executed_at: iso(r.executed_at),
  };
}

export function feeConfigRow(r: Row) {
  return {
    changed_at: iso(r.changed_at),
    fee_cap_bps: Number(r.fee_cap_bps),
    decay_rate_bps: Number(r.decay_rate_bps),
    protocol_share_bps: Number(r.protocol_share_bps),
    creator_share_bps: Number(r.creator_share_bps),
    referral_share_bps: Number(r.referral_share_bps),
    tx_signature: r.tx_signature as string,
  };
}

export const level = (r: Row) => ({ price: Number(r.price_bps), quantity: String(r.quantity), orders: Number(r.orders) });
