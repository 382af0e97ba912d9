import {
  BPS_SCALE,
  BookSide,
  MarketState,
  OrderStatusCode,
  PROTOCOL_TREASURY_SHARDS,
  fillEffect,
  isSide,
  toCanonical,
  type FillEffect,
  type Side,
} from '../../core/domain';
import type { OrderCancelled, OrderFilled, OrderPlaced } from '../../core/events';
import { updateAchievements } from './achievements';
import { check, type EventContext } from './context';
import { requireMarket } from './markets';
import type { MarketRow, OrderRow, PositionRow } from './rows';
import { levelKey, orderKey, type BatchState } from './state';

const RESTING = new Set<number>([OrderStatusCode.open, OrderStatusCode.pending_cancel, OrderStatusCode.cancel_failed]);
export const isResting = (o: OrderRow) => RESTING.has(o.statusCode);

/** Adds (or with negative numbers removes) quantity and order count at a canonical level. */
function changeLevel(state: BatchState, market: string, side: Side, priceBps: number, quantity: bigint, orders: number): void {
  const { bookSide, priceBps: price } = toCanonical(side, priceBps);
  const key = levelKey(market, bookSide, price);
  const level = state.levels.get(key);
  if (level) {
    level.quantity += quantity;
    level.orders += orders;
    state.levels.touch(key);
  } else {
    state.levels.insert(key, { marketAddress: market, bookSide, priceBps: price, quantity, orders });
  }
  state.bookTouched.add(market);
}

function requireTradingMarket(state: BatchState, address: string): MarketRow {
  const m = requireMarket(state, address);
  check(m.state === MarketState.Trading, 'market_not_trading', `market ${address} is in state ${m.state}`);
  return m;
}

export function orderPlaced(state: BatchState, e: OrderPlaced, ctx: EventContext): void {
  requireTradingMarket(state, e.market);
  check(isSide(e.side), 'invalid_value', `side ${e.side}`);
  check(e.priceBps >= 1 && e.priceBps <= BPS_SCALE - 1, 'invalid_value', `price ${e.priceBps}`);
  check(e.quantity > 0n, 'invalid_value', 'quantity 0');
  check(e.orderType <= 2, 'invalid_value', `orderType ${e.orderType}`);
  const key = orderKey(e.market, e.orderId);
  check(!state.orders.get(key), 'duplicate_order', `order ${e.orderId} already exists in ${e.market}`);
  state.orders.insert(key, {
    id: state.nextId('orders'),
    marketAddress: e.market,
    orderId: e.orderId,
    owner: e.owner,
    sideCode: e.side,
    priceBps: e.priceBps,
    quantity: e.quantity,
    filledQuantity: 0n,
    statusCode: OrderStatusCode.open,
    orderType: e.orderType,
    createdAt: ctx.blockTime,
    updatedAt: ctx.blockTime,
    createdSlot: ctx.slot,
    txSignature: ctx.signature,
  });
  changeLevel(state, e.market, e.side, e.priceBps, e.quantity, 1);
}

function requireRestingOrder(state: BatchState, market: string, orderId: bigint, owner: string): OrderRow {
  const o = state.orders.get(orderKey(market, orderId));
  check(o, 'unknown_order', `order ${orderId} is not indexed in ${market}`);
  check(o.owner === owner, 'order_mismatch', `order ${orderId} belongs to ${o.owner}, not ${owner}`);
  check(isResting(o), 'order_not_resting', `order ${orderId} is ${o.statusCode}`);
  return o;
}

/** Cancel and expire: the order leaves the book with its unfilled rest. */
export function orderClosed(state: BatchState, e: OrderCancelled, ctx: EventContext, status: number): void {
  requireMarket(state, e.market);
  const o = requireRestingOrder(state, e.market, e.orderId, e.owner);
  const remaining = o.quantity - o.filledQuantity;
  check(e.remainingQuantity === remaining, 'order_mismatch', `remaining ${e.remainingQuantity}, indexed ${remaining}`);
  o.statusCode = status;
  o.updatedAt = ctx.blockTime;
  state.orders.touch(orderKey(e.market, e.orderId));
  changeLevel(state, e.market, o.sideCode as Side, o.priceBps, -remaining, -1);
}

interface PositionPlan {
  row: PositionRow | undefined;
  address: string;
  owner: string;
  effect: FillEffect;
  fee: bigint;
}

function planPosition(state: BatchState, market: string, address: string, owner: string, side: Side, price: number, qty: bigint, fee: bigint): PositionPlan {
  const row = state.positions.get(address);
  if (row) {
    check(row.owner === owner && row.marketAddress === market, 'position_mismatch', `position ${address} is not ${owner}'s in ${market}`);
    check(!row.settled, 'position_mismatch', `position ${address} is already settled`);
  } else {
    const existing = state.positionByOwner.get(`${market}:${owner}`);
    check(!existing, 'position_mismatch', `${owner} already has position ${existing} in ${market}`);
  }
  const effect = fillEffect(side, price, qty);
  const yes = (row?.yesShares ?? 0n) + effect.yesDelta;
  const no = (row?.noShares ?? 0n) + effect.noDelta;
  check(yes >= 0n && no >= 0n, 'negative_balance', `position ${address} would hold ${yes} YES / ${no} NO`);
  return { row, address, owner, effect, fee };
}

function applyPosition(state: BatchState, market: MarketRow, p: PositionPlan, ctx: EventContext): boolean {
  let row = p.row;
  const created = !row;
  if (!row) {
    row = {
      id: state.nextId('positions'),
      address: p.address,
      marketAddress: market.address,
      owner: p.owner,
      yesShares: 0n,
      noShares: 0n,
      collateralDeposited: 0n,
      totalBought: 0n,
      totalSold: 0n,
      feesPaid: 0n,
      yesCost: 0n,
      noCost: 0n,
      settled: false,
      payout: 0n,
      createdAt: ctx.blockTime,
      updatedAt: ctx.blockTime,
      settledAt: null,
    };
    state.positions.insert(p.address, row);
    state.positionByOwner.set(`${market.address}:${p.owner}`, p.address);
    market.totalPositions += 1;
    state.platform.positions += 1;
  } else {
    state.positions.touch(p.address);
  }
  const e = p.effect;
  row.yesShares += e.yesDelta;
  row.noShares += e.noDelta;
  row.totalBought += e.bought;
  row.totalSold += e.sold;
  row.collateralDeposited += e.bought + p.fee;
  row.feesPaid += p.fee;
  if (e.yesDelta !== 0n) row.yesCost += e.cashDelta;
  else row.noCost += e.cashDelta;
  row.updatedAt = ctx.blockTime;
  market.totalYesShares += e.yesDelta;
  market.totalNoShares += e.noDelta;
  state.touchedPositions.add(p.address);
  return created;
}

function recordActivity(state: BatchState, wallet: string, qty: bigint, newMarket: boolean, ctx: EventContext): void {
  const a = state.activity.get(wallet);
  if (!a) {
    state.platform.traders += 1;
    state.activity.insert(wallet, {
      wallet,
      tradesCount: 1,
      volume: qty,
      marketsTraded: 1,
      firstTradeAt: ctx.blockTime,
      lastTradeAt: ctx.blockTime,
    });
  } else {
    a.tradesCount += 1;
    a.volume += qty;
    if (newMarket) a.marketsTraded += 1;
    a.lastTradeAt = ctx.blockTime;
    state.activity.touch(wallet);
  }
  updateAchievements(state, wallet, ctx);
}

export function orderFilled(state: BatchState, e: OrderFilled, ctx: EventContext): void {
  const market = requireTradingMarket(state, e.market);
  check(e.maker !== e.taker, 'invalid_value', 'self-trade');
  check(isSide(e.makerSide) && isSide(e.takerSide), 'invalid_value', 'side out of range');
  check(e.quantity > 0n, 'invalid_value', 'quantity 0');
  check(e.protocolTreasuryIndex < PROTOCOL_TREASURY_SHARDS, 'invalid_value', `treasury shard ${e.protocolTreasuryIndex}`);
  check(
    e.feeProtocol + e.feeCreator + e.feeReferral === e.takerFee,
    'fee_split_mismatch',
    `fee parts ${e.feeProtocol}+${e.feeCreator}+${e.feeReferral} != ${e.takerFee}`,
  );
  check(e.feeReferral === 0n || e.referrer !== null, 'fee_split_mismatch', 'referral fee without a referrer');
  const maker = requireRestingOrder(state, e.market, e.makerOrderId, e.maker);
  const taker = requireRestingOrder(state, e.market, e.takerOrderId, e.taker);
  check(maker.sideCode === e.makerSide && taker.sideCode === e.takerSide, 'order_mismatch', 'fill sides differ from the orders');
  const makerQuote = toCanonical(maker.sideCode as Side, maker.priceBps);
  const takerQuote = toCanonical(taker.sideCode as Side, taker.priceBps);
  check(makerQuote.priceBps === e.priceBps, 'order_mismatch', `fill at ${e.priceBps}, maker quotes ${makerQuote.priceBps}`);
  check(makerQuote.bookSide !== takerQuote.bookSide, 'order_mismatch', 'maker and taker are on the same side of the book');
  const crosses =
    takerQuote.bookSide === BookSide.Bid ? takerQuote.priceBps >= e.priceBps : takerQuote.priceBps <= e.priceBps;
  check(crosses, 'order_mismatch', `taker quote ${takerQuote.priceBps} does not cross ${e.priceBps}`);
  check(e.quantity <= maker.quantity - maker.filledQuantity, 'overfill', `maker order ${maker.orderId} overfilled`);
  check(e.quantity <= taker.quantity - taker.filledQuantity, 'overfill', `taker order ${taker.orderId} overfilled`);
  const makerPlan = planPosition(state, e.market, e.makerPosition, e.maker, e.makerSide as Side, e.priceBps, e.quantity, 0n);
  const takerPlan = planPosition(state, e.market, e.takerPosition, e.taker, e.takerSide as Side, e.priceBps, e.quantity, e.takerFee);
  check(e.makerPosition !== e.takerPosition, 'position_mismatch', 'maker and taker share a position account');

  // Everything checked: apply.
  for (const o of [maker, taker]) {
    o.filledQuantity += e.quantity;
    const full = o.filledQuantity === o.quantity;
    if (full) o.statusCode = OrderStatusCode.filled;
    o.updatedAt = ctx.blockTime;
    state.orders.touch(orderKey(e.market, o.orderId));
    changeLevel(state, e.market, o.sideCode as Side, o.priceBps, -e.quantity, full ? -1 : 0);
  }
  const makerNew = applyPosition(state, market, makerPlan, ctx);
  const takerNew = applyPosition(state, market, takerPlan, ctx);
  market.totalVolume += e.quantity;
  market.totalTrades += 1;
  state.platform.volume += e.quantity;
  state.platform.trades += 1;
  state.platform.protocolFees += e.feeProtocol;
  market.updatedAt = ctx.blockTime;
  state.markets.touch(e.market);
  state.trades.push({
    id: state.nextId('trades'),
    marketAddress: e.market,
    makerOrderId: e.makerOrderId,
    takerOrderId: e.takerOrderId,
    maker: e.maker,
    taker: e.taker,
    makerSide: e.makerSide,
    takerSide: e.takerSide,
    priceBps: e.priceBps,
    quantity: e.quantity,
    takerFee: e.takerFee,
    feeProtocol: e.feeProtocol,
    feeCreator: e.feeCreator,
    feeReferral: e.feeReferral,
    protocolTreasuryIndex: e.protocolTreasuryIndex,
    referrer: e.referrer,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
    slot: ctx.slot,
    executedAt: ctx.blockTime,
  });
  recordActivity(state, e.maker, e.quantity, makerNew, ctx);
  recordActivity(state, e.taker, e.quantity, takerNew, ctx);
}
