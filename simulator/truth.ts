import { fillEffect, Outcome, OrderStatusCode, type Outcome as OutcomeT, type Side } from '../core/domain';
import type { ProgramEvent } from '../core/events';
import type { Invocation } from './chain/types';
import type { ProgramState } from './program/state';

/**
 * The simulator's own record of what the chain did, never the projector's: tests compare the
 * projected tables to it row by row. Field names and value formats are those PostgreSQL
 * returns (snake_case, decimal strings).
 */
export interface Truth {
  markets: Record<string, string | number | null>[];
  orders: Record<string, string | number>[];
  levels: Record<string, string | number>[];
  positions: Record<string, string | number | boolean>[];
  trades: Record<string, string | number | null>[];
  referralLocks: Record<string, string>[];
  referrerEarnings: Record<string, string>[];
  userStats: Record<string, string | number>[];
  feeConfigChanges: number;
  tickSizeChanges: number;
  creatorClaims: Record<string, string>[];
  events: number;
  transactions: number;
  failedTransactions: number;
}

type OrderRow = { market_address: string; order_id: string; owner: string; side_code: number; price_bps: number; quantity: bigint; filled: bigint; status_code: number; order_type: number };

/**
 * Keeps the truth: the history (orders, trades, settled-trade statistics, claims, counts) from
 * the events of every transaction that succeeded, as the program emitted them; the current
 * state (markets, book levels, positions, referral locks and earnings) read from the
 * program's accounts; transaction counts from the chain.
 */
export function createTruthRecord(program: { state: Readonly<ProgramState> }, chain: { stats(): { transactions: number; failed: number } }) {
  const orders: OrderRow[] = [];
  /** Orders by market, then id. */
  const orderIndex = new Map<string, Map<bigint, OrderRow>>();
  const orderOf = (market: string, orderId: bigint) => orderIndex.get(market)!.get(orderId)!;
  const trades: Truth['trades'] = [];
  const creatorClaims: Truth['creatorClaims'] = [];
  const outcomes = new Map<string, OutcomeT>();
  /** Net cost basis per side, by market, then owner: what a settled side's P&L is measured against. */
  const costs = new Map<string, Map<string, { yes: bigint; no: bigint }>>();
  const stats = new Map<string, { trades: number; wins: number; losses: number; pnl: bigint }>();
  let events = 0;
  let feeConfigChanges = 0;
  let tickSizeChanges = 0;

  const fillOrder = (market: string, orderId: bigint, q: bigint) => {
    const o = orderOf(market, orderId);
    o.filled += q;
    if (o.filled === o.quantity) o.status_code = OrderStatusCode.filled;
  };
  const addCost = (market: string, owner: string, side: Side, price: number, q: bigint) => {
    let byOwner = costs.get(market);
    if (!byOwner) costs.set(market, (byOwner = new Map()));
    let c = byOwner.get(owner);
    if (!c) byOwner.set(owner, (c = { yes: 0n, no: 0n }));
    const e = fillEffect(side, price, q);
    if (e.yesDelta !== 0n) c.yes += e.cashDelta;
    else c.no += e.cashDelta;
  };

  /** One settled position: a record per traded side (D-29). */
  function settle(d: Extract<ProgramEvent, { kind: 'PositionSettled' }>['data']): void {
    const outcome = outcomes.get(d.market)!;
    const cost = costs.get(d.market)?.get(d.owner) ?? { yes: 0n, no: 0n };
    const yesPayout = outcome === Outcome.Yes ? d.yesShares : outcome === Outcome.Void ? d.yesShares / 2n : 0n;
    const sides = [
      { shares: d.yesShares, cost: cost.yes, payout: yesPayout },
      { shares: d.noShares, cost: cost.no, payout: d.payout - yesPayout },
    ].filter((s) => s.shares > 0n || s.cost !== 0n);
    if (!sides.length) return;
    const st = stats.get(d.owner) ?? { trades: 0, wins: 0, losses: 0, pnl: 0n };
    for (const s of sides) {
      const pnl = s.payout - s.cost;
      st.trades += 1;
      st.pnl += pnl;
      if (pnl > 0n) st.wins += 1;
      else st.losses += 1;
    }
    stats.set(d.owner, st);
  }

  function observe(emitted: ProgramEvent[], at: Invocation): void {
    events += emitted.length;
    for (let index = 0; index < emitted.length; index++) {
      const e = emitted[index]!;
      switch (e.kind) {
        case 'OrderPlaced': {
          const d = e.data;
          const row = { market_address: d.market, order_id: d.orderId.toString(), owner: d.owner, side_code: d.side, price_bps: d.priceBps, quantity: d.quantity, filled: 0n, status_code: OrderStatusCode.open, order_type: d.orderType };
          orders.push(row);
          let byId = orderIndex.get(d.market);
          if (!byId) orderIndex.set(d.market, (byId = new Map()));
          byId.set(d.orderId, row);
          continue;
        }
        case 'OrderFilled': {
          const d = e.data;
          fillOrder(d.market, d.makerOrderId, d.quantity);
          fillOrder(d.market, d.takerOrderId, d.quantity);
          addCost(d.market, d.maker, d.makerSide as Side, d.priceBps, d.quantity);
          addCost(d.market, d.taker, d.takerSide as Side, d.priceBps, d.quantity);
          trades.push({
            market_address: d.market, maker_order_id: d.makerOrderId.toString(), taker_order_id: d.takerOrderId.toString(), maker: d.maker, taker: d.taker,
            maker_side: d.makerSide, taker_side: d.takerSide, price_bps: d.priceBps, quantity: d.quantity.toString(), taker_fee: d.takerFee.toString(),
            fee_protocol: d.feeProtocol.toString(), fee_creator: d.feeCreator.toString(), fee_referral: d.feeReferral.toString(),
            protocol_treasury_index: d.protocolTreasuryIndex, referrer: d.referrer, event_index: index,
          });
          continue;
        }
        case 'OrderCancelled':
        case 'OrderExpired':
          orderOf(e.data.market, e.data.orderId).status_code = e.kind === 'OrderCancelled' ? OrderStatusCode.cancelled : OrderStatusCode.expired;
          continue;
        case 'MarketResolved':
          outcomes.set(e.data.market, e.data.outcome as OutcomeT);
          continue;
        case 'PositionSettled':
          settle(e.data);
          continue;
        case 'CreatorFeesClaimed':
          creatorClaims.push({ market_address: e.data.market, amount: e.data.amount.toString(), tx_signature: at.signature });
          continue;
        case 'FeeConfigChanged':
          feeConfigChanges += 1;
          continue;
        case 'TickSizeChanged':
          tickSizeChanges += 1;
          continue;
        default:
          continue;
      }
    }
  }

  function snapshot(): Truth {
    const s = program.state;
    const markets = [...s.markets.values()];
    const levels = new Map<string, { market_address: string; book_side: number; price_bps: number; quantity: bigint; orders: number }>();
    for (const m of markets) {
      for (const o of [...m.bids, ...m.asks]) {
        const key = `${m.address}:${o.bookSide}:${o.bookPrice}`;
        const l = levels.get(key) ?? { market_address: m.address, book_side: o.bookSide, price_bps: o.bookPrice, quantity: 0n, orders: 0 };
        l.quantity += o.quantity - o.filled;
        l.orders += 1;
        levels.set(key, l);
      }
    }
    const { transactions, failed } = chain.stats();
    return {
      markets: markets.map((m) => ({
        address: m.address, market_id: m.marketId.toString(), state: m.state, outcome: m.outcome,
        start_price: m.startPrice?.toString() ?? null, end_price: m.endPrice?.toString() ?? null,
        total_volume: m.volume.toString(), total_trades: String(m.trades), total_positions: String(m.positions.size),
        total_yes_shares: m.yesShares.toString(), total_no_shares: m.noShares.toString(),
        best_bid: m.bids[0]?.bookPrice ?? null, best_ask: m.asks[0]?.bookPrice ?? null,
        accumulated_creator_fees: m.creatorFees.toString(), creator_fees_earned: m.creatorEarned.toString(),
      })),
      orders: orders.map((o) => ({
        market_address: o.market_address, order_id: o.order_id, owner: o.owner, side_code: o.side_code, price_bps: o.price_bps,
        quantity: o.quantity.toString(), filled_quantity: o.filled.toString(), status_code: o.status_code, order_type: o.order_type,
      })),
      levels: [...levels.values()].map((l) => ({ ...l, quantity: l.quantity.toString() })),
      positions: markets.flatMap((m) =>
        [...m.positions.values()].map((p) => ({
          address: p.address, market_address: p.market, owner: p.owner, yes_shares: p.yes.toString(), no_shares: p.no.toString(),
          collateral_deposited: p.collateral.toString(), total_bought: p.bought.toString(), total_sold: p.sold.toString(),
          fees_paid: p.fees.toString(), settled: p.settled, payout: p.payout.toString(),
        })),
      ),
      trades: [...trades],
      referralLocks: [...s.locks.entries()].map(([wallet, l]) => ({ wallet, referrer: l.referrer })),
      referrerEarnings: [...s.earnings.values()].map((e) => ({
        wallet: e.wallet, settlement_mint: e.mint, accumulated: e.accumulated.toString(), total_earned: e.earned.toString(), total_claimed: e.claimed.toString(),
      })),
      userStats: [...stats.entries()].map(([wallet, st]) => ({ wallet, total_trades: st.trades, winning_trades: st.wins, losing_trades: st.losses, total_pnl: st.pnl.toString() })),
      feeConfigChanges,
      tickSizeChanges,
      creatorClaims: [...creatorClaims],
      events,
      transactions,
      failedTransactions: failed,
    };
  }

  return { observe, snapshot };
}
