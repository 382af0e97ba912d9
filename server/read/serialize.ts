import { createPayload, iso } from '../../core/db/table';
import * as tables from '../../core/db/tables';

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
