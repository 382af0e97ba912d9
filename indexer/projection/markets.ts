import { MarketState, Outcome } from '../../core/domain';
import type { MarketClosed, MarketInitialized, MarketResolved, MarketSettling, TradingStarted } from '../../core/events';
import { check, type EventContext } from './context';
import type { MarketRow } from './rows';
import type { BatchState } from './state';

const fromUnix = (s: bigint) => new Date(Number(s) * 1000);

export function requireMarket(state: BatchState, address: string): MarketRow {
  const m = state.markets.get(address);
  check(m, 'unknown_market', `market ${address} is not indexed`);
  state.rememberMarket(address);
  return m;
}

/** Forward-only lifecycle (decision D-7): each event moves exactly one state on. */
function transition(state: BatchState, address: string, from: number, ctx: EventContext): MarketRow {
  const m = requireMarket(state, address);
  check(m.state === from, 'invalid_transition', `market ${address} is in state ${m.state}, expected ${from}`);
  state.markets.touch(address);
  // Every transition moves exactly one state on (see the callers).
  state.countState(from, m.marketId, -1);
  state.countState(from + 1, m.marketId, 1);
  m.updatedAt = ctx.blockTime;
  return m;
}

export function marketInitialized(state: BatchState, e: MarketInitialized, ctx: EventContext): void {
  check(!state.markets.get(e.market), 'duplicate_market', `market ${e.market} is already indexed`);
  check(e.tEnd > e.tStart, 'invalid_value', 'tEnd is not after tStart');
  check(e.maxConfidenceRatioBps <= 10_000, 'invalid_value', 'maxConfidenceRatioBps above 10000');
  check(e.tStart >= 0n && e.tEnd < 253_402_300_800n, 'invalid_value', 'market times out of range');
  state.rememberMarket(e.market);
  state.markets.insert(e.market, {
    id: state.nextId('markets'),
    address: e.market,
    marketId: e.marketId,
    oracleFeed: e.oracleFeed,
    oracleFeedId: e.oracleFeedId,
    settlementMint: e.settlementMint,
    creator: e.creator,
    durationSeconds: e.durationSeconds,
    maxConfidenceRatioBps: e.maxConfidenceRatioBps,
    state: MarketState.Created,
    outcome: null,
    tStart: fromUnix(e.tStart),
    tEnd: fromUnix(e.tEnd),
    startPrice: null,
    startPriceConf: null,
    startPriceExpo: null,
    endPrice: null,
    endPriceConf: null,
    endPriceExpo: null,
    totalCollateral: e.initialCollateral,
    totalYesShares: 0n,
    totalNoShares: 0n,
    totalVolume: 0n,
    totalTrades: 0,
    totalPositions: 0,
    bestBid: null,
    bestAsk: null,
    accumulatedCreatorFees: 0n,
    creatorFeesEarned: 0n,
    createdAt: ctx.blockTime,
    resolvedAt: null,
    updatedAt: ctx.blockTime,
    createdSlot: ctx.slot,
    createdSignature: ctx.signature,
  });
  // A new market's book is empty: nothing to load.
  state.bookLoaded.add(e.market);
  state.countState(MarketState.Created, e.marketId, 1);
}

export function tradingStarted(state: BatchState, e: TradingStarted, ctx: EventContext): void {
  const m = transition(state, e.market, MarketState.Created, ctx);
  m.state = MarketState.Trading;
  m.startPrice = e.startPrice;
  m.startPriceConf = e.startPriceConf;
  m.startPriceExpo = e.startPriceExpo;
}

export function marketSettling(state: BatchState, e: MarketSettling, ctx: EventContext): void {
  transition(state, e.market, MarketState.Trading, ctx).state = MarketState.Settling;
}

export function marketResolved(state: BatchState, e: MarketResolved, ctx: EventContext): void {
  check(e.outcome === Outcome.Yes || e.outcome === Outcome.No || e.outcome === Outcome.Void, 'invalid_value', `outcome ${e.outcome}`);
  const m = transition(state, e.market, MarketState.Settling, ctx);
  m.state = MarketState.Resolved;
  m.endPrice = e.endPrice;
  m.endPriceConf = e.endPriceConf;
  m.endPriceExpo = e.endPriceExpo;
  m.outcome = e.outcome;
  m.resolvedAt = ctx.blockTime;
}

export function marketClosed(state: BatchState, e: MarketClosed, ctx: EventContext): void {
  transition(state, e.market, MarketState.Resolved, ctx).state = MarketState.Closed;
}
