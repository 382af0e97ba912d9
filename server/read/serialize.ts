import { createPayload, iso } from '../../core/db/table';
import * as tables from '../../core/db/tables';
import { currentYesPrice, isYesSide, ORDER_STATUSES, OUTCOME_LABELS, sideLabel, type Outcome, type Side } from '../../core/domain';

/**
 * Row → API payload conversions. How each column is written (amounts as decimal strings,
 * times ISO, ints as numbers) comes from its table descriptor; a payload only picks fields.
 */
type Row = Record<string, unknown>;

export { iso };

/** Fields every market payload shares: identity, window, and the oracle prices. */
const MARKET_CORE = [
  'id', 'address', 'marketId', 'oracleFeed', 'tStart', 'tEnd', 'startPrice', 'startPriceConf', 'startPriceExpo',
  'endPrice', 'endPriceConf', 'endPriceExpo', 'state', 'outcome', 'totalVolume', 'totalTrades', 'totalPositions',
] as const;

export const marketListItem = createPayload(
  tables.markets,
  [...MARKET_CORE, 'oracleFeedId', 'creator', 'durationSeconds', 'maxConfidenceRatioBps', 'bestBid', 'bestAsk'],
  'camel',
);

// `totalCollateral` is deprecated by the spec and frozen at its create-time value.
export const currentMarket = createPayload(
  tables.markets,
  [...MARKET_CORE, 'settlementMint', 'totalYesShares', 'totalNoShares', 'createdAt', 'resolvedAt', 'totalCollateral'],
  'camel',
);

const tradeHead = createPayload(
  tables.trades,
  ['id', 'marketAddress', 'makerOrderId', 'takerOrderId', 'maker', 'taker', 'priceBps', 'quantity', 'makerSide', 'takerFee', 'feeProtocol', 'feeCreator', 'feeReferral', 'protocolTreasuryIndex'],
  'snake',
);
const tradeTail = createPayload(tables.trades, ['txSignature'], 'snake');
const tradeEnd = createPayload(tables.trades, ['slot', 'executedAt'], 'snake');

/** A trade with the spec's alias fields, each beside the field it repeats. */
export function trade(r: Row) {
  const head = tradeHead(r);
  const tail = tradeTail(r);
  return { ...head, treasury_index: head.protocol_treasury_index, ...tail, signature: tail.tx_signature, ...tradeEnd(r) };
}

export const feeConfigRow = createPayload(
  tables.feeConfigHistory,
  ['changedAt', 'feeCapBps', 'decayRateBps', 'protocolShareBps', 'creatorShareBps', 'referralShareBps', 'txSignature'],
  'snake',
);

export const level = (r: Row) => ({ price: Number(r.price_bps), quantity: String(r.quantity), orders: Number(r.orders) });

export function order(r: Row) {
  const sideCode = Number(r.side_code) as Side;
  return {
    id: Number(r.id),
    orderId: String(r.order_id),
    marketAddress: r.market_address as string,
    marketId: String(r.market_id),
    settlementMint: r.settlement_mint as string,
    owner: r.owner as string,
    side: isYesSide(sideCode) ? 'yes' : 'no',
    sideCode,
    sideLabel: sideLabel(sideCode),
    isYes: isYesSide(sideCode),
    priceBps: Number(r.price_bps),
    quantity: String(r.quantity),
    filledQuantity: String(r.filled_quantity),
    status: ORDER_STATUSES[Number(r.status_code)],
    statusCode: Number(r.status_code),
    orderType: Number(r.order_type),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

const orNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function position(r: Row) {
  return {
    id: Number(r.id),
    address: r.address as string,
    marketAddress: r.market_address as string,
    owner: r.owner as string,
    market: { oracleFeed: (r.oracle_feed as string | null) ?? null, state: Number(r.state), outcome: orNull(r.outcome) },
    yesShares: String(r.yes_shares),
    noShares: String(r.no_shares),
    collateralDeposited: String(r.collateral_deposited),
    totalBought: String(r.total_bought),
    totalSold: String(r.total_sold),
    settled: r.settled as boolean,
    payout: String(r.payout),
    currentYesPrice: currentYesPrice(orNull(r.best_bid), orNull(r.best_ask), orNull(r.last_price)),
  };
}

export const creatorFeeClaim = (c: Row) => ({
  marketAddress: c.market_address as string,
  creatorTokenAccount: c.creator_token_account as string,
  caller: c.caller as string,
  amount: String(c.amount),
  slot: Number(c.slot),
  signature: c.tx_signature as string,
  claimedAt: iso(c.claimed_at),
});

export const achievement = (r: Row) => ({
  id: Number(r.id),
  code: r.code as string,
  name: r.name as string,
  description: r.description as string,
  category: r.category as string,
  iconUrl: (r.icon_url as string | null) ?? null,
  threshold: Number(r.threshold),
  createdAt: iso(r.created_at),
});

export const settledTrade = (t: Row) => ({
  id: Number(t.id),
  marketId: String(t.market_id),
  side: t.side as string,
  shares: String(t.shares),
  cost: String(t.cost),
  payout: String(t.payout),
  pnl: String(t.pnl),
  outcome: t.is_win ? 'win' : 'loss',
  marketOutcome: OUTCOME_LABELS[Number(t.market_outcome) as Outcome],
  settledAt: iso(t.settled_at),
  tStart: iso(t.t_start),
  tEnd: iso(t.t_end),
});
