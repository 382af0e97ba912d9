import { MarketState, OrderStatusCode, resolveOutcome, settlementPayout } from '../../core/domain';
import type { ProgramEvent } from '../../core/events';
import type { Handlers } from './handler';
import { release, type Market, type ProgramState } from './state';

type MarketCall = { accounts: Record<string, string>; signer: string };

/** The market the call names, when its creator signed (the lifecycle's authority). */
const byCreator = (s: ProgramState, c: MarketCall): Market | undefined => {
  const m = s.markets.get(c.accounts.market!);
  return m && m.creator === c.signer ? m : undefined;
};
const marketOf = (s: ProgramState, c: MarketCall) => s.markets.get(c.accounts.market!)!;
const settled = (m: Market) => m.state === MarketState.Resolved || m.state === MarketState.Closed;

/**
 * A market's life: created for an epoch, trading from its start, settling at its end (resting
 * orders expire), resolved on the oracle's end price, closed; and what holders and the
 * creator claim once it is resolved. The clock is the block's time.
 */
export const marketHandlers: Handlers<
  'initialize_market' | 'start_trading' | 'settle_market' | 'resolve_market' | 'close_market' | 'claim_payout' | 'claim_creator_fees'
> = {
  initialize_market: {
    check(s, { args, accounts }) {
      if (s.markets.has(accounts.market!)) return 'InvalidAccount';
      return args.tEnd > args.tStart && args.durationSeconds === args.tEnd - args.tStart ? undefined : 'InvalidArgument';
    },
    run(s, { args, accounts, signer }) {
      const m: Market = {
        address: accounts.market!,
        marketId: args.marketId,
        creator: signer,
        mint: accounts.settlement_mint!,
        oracleFeed: args.oracleFeed,
        tStart: Number(args.tStart),
        tEnd: Number(args.tEnd),
        maxConfidenceRatioBps: args.maxConfidenceRatioBps,
        state: MarketState.Created,
        outcome: null,
        startPrice: null,
        endPrice: null,
        nextOrderId: 1n,
        bids: [],
        asks: [],
        volume: 0n,
        trades: 0,
        yesShares: 0n,
        noShares: 0n,
        creatorFees: 0n,
        creatorEarned: 0n,
        positions: new Map(),
      };
      s.markets.set(m.address, m);
      return [{ kind: 'MarketInitialized', data: { market: m.address, creator: m.creator, settlementMint: m.mint, ...args, initialCollateral: 0n } }];
    },
  },
  start_trading: {
    check(s, c) {
      const m = byCreator(s, c);
      if (!m) return 'InvalidAccount';
      return m.state === MarketState.Created && c.now >= m.tStart ? undefined : 'InvalidArgument';
    },
    run(s, c) {
      const m = marketOf(s, c);
      m.state = MarketState.Trading;
      m.startPrice = c.args.startPrice;
      return [{ kind: 'TradingStarted', data: { market: m.address, ...c.args } }];
    },
  },
  settle_market: {
    check(s, c) {
      const m = byCreator(s, c);
      if (!m) return 'InvalidAccount';
      return m.state === MarketState.Trading && c.now >= m.tEnd ? undefined : 'MarketNotTrading';
    },
    /** Trading ends: every resting order expires, oldest first; then the market waits for its price. */
    run(s, c) {
      const m = marketOf(s, c);
      const events: ProgramEvent[] = [];
      for (const o of [...m.bids, ...m.asks].sort((a, b) => a.seq - b.seq)) {
        events.push({ kind: 'OrderExpired', data: { market: m.address, orderId: o.orderId, owner: o.owner, remainingQuantity: o.quantity - o.filled } });
        release(m, o);
        o.status = OrderStatusCode.expired;
      }
      m.bids = [];
      m.asks = [];
      m.state = MarketState.Settling;
      events.push({ kind: 'MarketSettling', data: { market: m.address } });
      return events;
    },
  },
  resolve_market: {
    check(s, c) {
      const m = byCreator(s, c);
      if (!m) return 'InvalidAccount';
      return m.state === MarketState.Settling && c.now >= m.tEnd ? undefined : 'InvalidArgument';
    },
    run(s, c) {
      const m = marketOf(s, c);
      const a = c.args;
      const outcome = resolveOutcome({ startPrice: m.startPrice!, endPrice: a.endPrice, endConf: a.endPriceConf, maxConfidenceRatioBps: m.maxConfidenceRatioBps });
      m.state = MarketState.Resolved;
      m.outcome = outcome;
      m.endPrice = a.endPrice;
      return [{ kind: 'MarketResolved', data: { market: m.address, endPrice: a.endPrice, endPriceConf: a.endPriceConf, endPriceExpo: a.endPriceExpo, outcome, publishTime: a.publishTime } }];
    },
  },
  close_market: {
    check(s, c) {
      const m = byCreator(s, c);
      if (!m) return 'InvalidAccount';
      return m.state === MarketState.Resolved ? undefined : 'MarketNotResolved';
    },
    run(s, c) {
      marketOf(s, c).state = MarketState.Closed;
      return [{ kind: 'MarketClosed', data: { market: c.accounts.market! } }];
    },
  },
  claim_payout: {
    check(s, { accounts, signer }) {
      const m = s.markets.get(accounts.market!);
      if (!m || m.mint !== accounts.settlement_mint) return 'InvalidAccount';
      if (!settled(m)) return 'MarketNotResolved';
      const p = m.positions.get(signer);
      return p && !p.settled ? undefined : 'NothingToClaim';
    },
    run(s, c) {
      const m = marketOf(s, c);
      const p = m.positions.get(c.signer)!;
      const payout = settlementPayout(m.outcome!, p.yes, p.no);
      p.settled = true;
      p.payout = payout;
      return [{ kind: 'PositionSettled', data: { market: m.address, owner: p.owner, position: p.address, yesShares: p.yes, noShares: p.no, payout } }];
    },
  },
  claim_creator_fees: {
    check(s, { accounts }) {
      const m = s.markets.get(accounts.market!);
      if (!m || m.mint !== accounts.settlement_mint || m.creator !== accounts.creator) return 'InvalidAccount';
      if (!settled(m)) return 'MarketNotResolved';
      return m.creatorFees > 0n ? undefined : 'NothingToClaim';
    },
    run(s, c) {
      const m = marketOf(s, c);
      const amount = m.creatorFees;
      m.creatorFees = 0n;
      return [{ kind: 'CreatorFeesClaimed', data: { market: m.address, creator: m.creator, creatorTokenAccount: c.accounts.creator_token_account!, caller: c.signer, amount } }];
    },
  },
};
