import {
  fillEffect,
  MarketState,
  OrderStatusCode,
  OrderType,
  orderPriceProblem,
  orderQuantityProblem,
  PROTOCOL_TREASURY_SHARDS,
  Side,
  splitFee,
  takerFee,
  toCanonical,
  type FeeParts,
} from '../../core/domain';
import type { OrderFilled, ProgramEvent } from '../../core/events';
import type { Handlers } from './handler';
import { positionOf, release, rest, unrest, type Market, type Order, type ProgramState } from './state';

const crossesTop = (quote: { bookSide: number; priceBps: number }, top: Order | undefined) =>
  !!top && (quote.bookSide === 0 ? quote.priceBps >= top.bookPrice : quote.priceBps <= top.bookPrice);
const oppositeOf = (m: Market, bookSide: number) => (bookSide === 0 ? m.asks : m.bids);
const findOrder = (m: Market, orderId: bigint) => m.bids.find((o) => o.orderId === orderId) ?? m.asks.find((o) => o.orderId === orderId);

/** The order book instructions: place_order (match at the makers' prices, rest or cancel the rest) and cancel_order. */
export const orderHandlers: Handlers<'place_order' | 'cancel_order'> = {
  place_order: {
    check(s, { args: a, accounts, signer }) {
      const m = s.markets.get(accounts.market!);
      if (!m || m.mint !== accounts.settlement_mint) return 'InvalidAccount';
      if (m.state !== MarketState.Trading) return 'MarketNotTrading';
      if (a.side > 3 || a.orderType > 2) return 'InvalidArgument';
      if (orderPriceProblem(a.priceBps, s.tickSize)) return 'InvalidPrice';
      if (orderQuantityProblem(a.quantity)) return 'InvalidQuantity';
      if (a.side === Side.SellYes || a.side === Side.SellNo) {
        const p = m.positions.get(signer);
        const avail = !p ? 0n : a.side === Side.SellYes ? p.yes - p.lockedYes : p.no - p.lockedNo;
        if (avail < a.quantity) return 'InsufficientShares';
      }
      return undefined;
    },
    preflight(s, { args: a, accounts }) {
      const m = s.markets.get(accounts.market!)!;
      const quote = toCanonical(a.side as Side, a.priceBps);
      return a.orderType === OrderType.PostOnly && crossesTop(quote, oppositeOf(m, quote.bookSide)[0]) ? 'PostOnlyWouldCross' : undefined;
    },
    run(s, { args, accounts, signer: owner, now }) {
      const m = s.markets.get(accounts.market!)!;
      const side = args.side as Side;
      const { priceBps, quantity, orderType } = args;
      const quote = toCanonical(side, priceBps);
      const orderId = m.nextOrderId;
      const placed: ProgramEvent = { kind: 'OrderPlaced', data: { market: m.address, orderId, owner, side, priceBps, quantity, orderType } };
      const opposite = oppositeOf(m, quote.bookSide);
      // A crossing post-only order fails after emitting OrderPlaced: a failed transaction
      // whose log still shows an event, which indexers must ignore.
      if (orderType === OrderType.PostOnly && crossesTop(quote, opposite[0])) return { error: 'PostOnlyWouldCross', emitted: [placed] };
      m.nextOrderId += 1n;
      s.orderSeq += 1;
      const order: Order = {
        market: m.address, orderId, owner, side, priceBps, quantity, filled: 0n,
        status: OrderStatusCode.open, orderType, bookSide: quote.bookSide, bookPrice: quote.priceBps, seq: s.orderSeq,
      };
      const events: ProgramEvent[] = [placed];
      const p = m.positions.get(owner);
      if (side === Side.SellYes) p!.lockedYes += quantity;
      if (side === Side.SellNo) p!.lockedNo += quantity;
      while (order.filled < order.quantity && crossesTop(quote, opposite[0])) {
        const maker = opposite[0]!;
        // Self-trade prevention: the incoming order's rest is cancelled.
        if (maker.owner === owner) break;
        const a = order.quantity - order.filled;
        const b = maker.quantity - maker.filled;
        fill(s, m, maker, order, a < b ? a : b, now, events);
        if (maker.filled === maker.quantity) {
          maker.status = OrderStatusCode.filled;
          opposite.shift();
        }
      }
      const left = order.quantity - order.filled;
      if (left === 0n) order.status = OrderStatusCode.filled;
      else if (orderType === OrderType.ImmediateOrCancel || crossesTop(quote, opposite[0])) {
        release(m, order);
        order.status = OrderStatusCode.cancelled;
        events.push({ kind: 'OrderCancelled', data: { market: m.address, orderId, owner, remainingQuantity: left } });
      } else rest(m, order);
      return events;
    },
  },
  cancel_order: {
    check(s, { args, accounts, signer }) {
      const m = s.markets.get(accounts.market!);
      if (!m) return 'InvalidAccount';
      const o = findOrder(m, args.orderId);
      if (!o) return 'OrderNotFound';
      return o.owner === signer ? undefined : 'NotOrderOwner';
    },
    run(s, { args, accounts }) {
      const m = s.markets.get(accounts.market!)!;
      const o = findOrder(m, args.orderId)!;
      unrest(m, o);
      release(m, o);
      o.status = OrderStatusCode.cancelled;
      return [{ kind: 'OrderCancelled', data: { market: m.address, orderId: o.orderId, owner: o.owner, remainingQuantity: o.quantity - o.filled } }];
    },
  },
};

/** One match of `q` shares at the maker's price: the fee and its split, both positions, the market's totals, the events. */
function fill(s: ProgramState, m: Market, maker: Order, taker: Order, q: bigint, now: number, events: ProgramEvent[]): void {
  const price = maker.bookPrice;
  const fee = takerFee(s.feeCurve, price, q);
  const lock = s.locks.get(taker.owner);
  const referrer = lock && lock.expiresAt > now ? lock.referrer : null;
  const parts = splitFee(fee, s.feeSplit, referrer !== null);
  for (const [o, paid] of [[maker, 0n], [taker, fee]] as const) {
    const p = positionOf(s, m, o.owner);
    if (!m.positions.has(o.owner)) m.positions.set(o.owner, p);
    const e = fillEffect(o.side, price, q);
    p.yes += e.yesDelta;
    p.no += e.noDelta;
    if (o.side === Side.SellYes) p.lockedYes -= q;
    if (o.side === Side.SellNo) p.lockedNo -= q;
    p.bought += e.bought;
    p.sold += e.sold;
    p.collateral += e.bought + paid;
    p.fees += paid;
    m.yesShares += e.yesDelta;
    m.noShares += e.noDelta;
    if (p.yes < 0n || p.no < 0n) throw new Error('the program produced a negative balance');
    o.filled += q;
  }
  m.volume += q;
  m.trades += 1;
  const filled: OrderFilled = {
    market: m.address,
    makerOrderId: maker.orderId,
    takerOrderId: taker.orderId,
    maker: maker.owner,
    taker: taker.owner,
    makerPosition: m.positions.get(maker.owner)!.address,
    takerPosition: m.positions.get(taker.owner)!.address,
    makerSide: maker.side,
    takerSide: taker.side,
    priceBps: price,
    quantity: q,
    takerFee: fee,
    feeProtocol: parts.protocol,
    feeCreator: parts.creator,
    feeReferral: parts.referral,
    protocolTreasuryIndex: Number(taker.orderId % BigInt(PROTOCOL_TREASURY_SHARDS)),
    referrer,
  };
  events.push({ kind: 'OrderFilled', data: filled });
  creditFees(s, m, taker, parts, referrer, events);
}

/** The creator's and the referrer's shares of the fee, with their events. */
function creditFees(s: ProgramState, m: Market, taker: Order, parts: FeeParts, referrer: string | null, events: ProgramEvent[]): void {
  if (parts.creator > 0n) {
    m.creatorFees += parts.creator;
    m.creatorEarned += parts.creator;
    events.push({ kind: 'CreatorFeesAccrued', data: { market: m.address, creator: m.creator, amount: parts.creator } });
  }
  if (referrer && parts.referral > 0n) {
    const key = `${referrer}:${m.mint}`;
    const e = s.earnings.get(key) ?? { wallet: referrer, mint: m.mint, accumulated: 0n, earned: 0n, claimed: 0n };
    e.accumulated += parts.referral;
    e.earned += parts.referral;
    s.earnings.set(key, e);
    events.push({ kind: 'ReferrerCredited', data: { referrer, referee: taker.owner, market: m.address, settlementMint: m.mint, amount: parts.referral } });
  }
}
