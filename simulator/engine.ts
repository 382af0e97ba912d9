import prand from 'pure-rand';
import {
  BPS_SCALE,
  DEFAULT_FEE_CONFIG,
  DEFAULT_TICK_SIZE_BPS,
  MarketState,
  OrderStatusCode,
  OrderType,
  Outcome,
  PROTOCOL_TREASURY_SHARDS,
  Side,
  fillEffect,
  isBuySide,
  resolveOutcome,
  settlementPayout,
  splitFee,
  takerFee,
  toCanonical,
  type FeeParts,
  type FeeSplit,
  type Outcome as OutcomeT,
} from '../core/domain';
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { orderPriceProblem, orderQuantityProblem } from '../core/domain';
import { buildTransaction, type ProgramEvent, type RawTransaction } from '../core/events';
import { deriveAccountSync, derivePdaSync, programError } from '../core/tx';
import { addressOf, hexOf, keyPairOf, signatureOf } from './ids';
import { SimulatedPythFeed, type AccountSnapshot } from './oracle';
import { parseSubmission, RpcSubmitError, simulationFailed, type Submitted } from './submit';
import type { Truth } from './truth';

export interface SimulatorOptions {
  seed: number;
  programId: string;
  feeds?: number;
  epochSeconds?: number;
  slotMs?: number;
  wallets?: number;
  /** Unix seconds of slot 1. */
  startTime?: number;
  /** Orders per trading market per slot, on average. */
  ordersPerSlot?: number;
  /** How events leave the program: `Program data:` logs or emit_cpi (alternating per transaction with 'mixed'). */
  emit?: 'log' | 'cpi' | 'mixed';
}

export interface Block {
  slot: number;
  blockTime: number;
  transactions: RawTransaction[];
}

interface SimOrder {
  market: string;
  orderId: bigint;
  owner: string;
  side: Side;
  priceBps: number;
  quantity: bigint;
  filled: bigint;
  status: number;
  orderType: number;
  bookSide: number;
  bookPrice: number;
  seq: number;
}

interface SimPosition {
  address: string;
  market: string;
  owner: string;
  yes: bigint;
  no: bigint;
  lockedYes: bigint;
  lockedNo: bigint;
  collateral: bigint;
  bought: bigint;
  sold: bigint;
  fees: bigint;
  yesCost: bigint;
  noCost: bigint;
  settled: boolean;
  payout: bigint;
}

interface SimMarket {
  address: string;
  feed: number;
  marketId: bigint;
  creator: string;
  mint: string;
  tStart: number;
  tEnd: number;
  state: MarketState;
  outcome: OutcomeT | null;
  startPrice: bigint | null;
  endPrice: bigint | null;
  nextOrderId: bigint;
  bids: SimOrder[];
  asks: SimOrder[];
  volume: bigint;
  trades: number;
  yesShares: bigint;
  noShares: bigint;
  creatorFees: bigint;
  creatorEarned: bigint;
  positions: Map<string, SimPosition>;
  redeemQueue: string[] | null;
}

const FEED_BASE_PRICES = [10_000_000_000_000n, 300_000_000_000n, 15_000_000_000n];
const PRICE_EXPO = -8;
const MAX_CONF_RATIO_BPS = 100;

/**
 * A seeded, deterministic model of the market program: epoch markets on every feed, an
 * oracle random walk, wallets placing, crossing and cancelling orders on a price-time
 * priority book, fees with the three-way split, settlement, redemption, referrals and
 * creator fees. Each block is a list of real transactions (the `getTransaction` shape with
 * the program's event bytes); the same seed always yields the same chain.
 */
export class MarketSimulator {
  readonly programId: string;
  readonly eventAuthority: string;
  readonly epochSeconds: number;
  readonly slotMs: number;
  readonly startTime: number;
  private readonly rng: prand.RandomGenerator;
  private readonly wallets: string[];
  readonly walletKeys: { address: string; secretKey: Uint8Array }[];
  private readonly mints: string[];
  private readonly feeds: { address: string; feedId: string; price: bigint; oracle: SimulatedPythFeed }[];
  private readonly ordersPerSlot: number;
  private readonly emit: 'log' | 'cpi' | 'mixed';

  private slotNo = 0;
  private txCounter = 0;
  private orderSeq = 0;
  private readonly markets = new Map<string, SimMarket>();
  private readonly marketsByEpoch = new Map<string, string>();
  private readonly allOrders: SimOrder[] = [];
  private readonly tradeRows: Truth['trades'] = [];
  private readonly locks = new Map<string, { referrer: string; expiresAt: number }>();
  private readonly earnings = new Map<string, { wallet: string; mint: string; accumulated: bigint; earned: bigint; claimed: bigint }>();
  private readonly stats = new Map<string, { trades: number; wins: number; losses: number; pnl: bigint }>();
  private readonly creatorClaims: Truth['creatorClaims'] = [];
  private feeCurve: { feeCapBps: number; decayRateBps: number } = { ...DEFAULT_FEE_CONFIG };
  private feeSplit: FeeSplit = { protocolShareBps: 7000, creatorShareBps: 2000, referralShareBps: 1000 };
  private tickSize = DEFAULT_TICK_SIZE_BPS;
  private feeConfigChanges = 0;
  private tickSizeChanges = 0;
  private events = 0;
  private failed = 0;
  /** Simulated traders; other wallets' positions wait for their own claim_payout. */
  private readonly walletSet: Set<string>;
  /** Signed transactions sent through `submit`, run at the start of the next block. */
  private submitted: Submitted[] = [];
  private readonly seenSignatures = new Set<string>();

  constructor(opts: SimulatorOptions) {
    this.programId = opts.programId;
    // Anchor's emit_cpi signer: the PDA ["__event_authority"] of the program.
    this.eventAuthority = derivePdaSync(opts.programId, [Buffer.from('__event_authority')]);
    this.epochSeconds = opts.epochSeconds ?? 60;
    this.slotMs = opts.slotMs ?? 400;
    this.startTime = opts.startTime ?? 1_767_225_600;
    this.ordersPerSlot = opts.ordersPerSlot ?? 1.5;
    this.emit = opts.emit ?? 'mixed';
    this.rng = prand.xoroshiro128plus(opts.seed);
    // Real Ed25519 key pairs, so tests can sign wallet-auth messages as any simulated trader.
    this.walletKeys = Array.from({ length: opts.wallets ?? 40 }, (_, i) => keyPairOf(`wallet:${opts.seed}:${i}`));
    this.wallets = this.walletKeys.map((k) => k.address);
    this.walletSet = new Set(this.wallets);
    this.mints = [addressOf('mint:usdc'), addressOf('mint:usdt')];
    this.feeds = Array.from({ length: opts.feeds ?? 2 }, (_, f) => {
      const address = addressOf(`feed:${f}`);
      return {
        address,
        feedId: hexOf(`feed-id:${f}`),
        price: FEED_BASE_PRICES[f % FEED_BASE_PRICES.length]!,
        oracle: new SimulatedPythFeed(address, (opts.seed ^ 0x5eed) + f * 7919, PRICE_EXPO),
      };
    });
  }

  get slot(): number {
    return this.slotNo;
  }

  /** The blockhash of a slot's block (deterministic); block height equals slot here. */
  blockhashOf(slot: number): string {
    return bs58.encode(createHash('sha256').update(`blockhash:${this.programId}:${slot}`).digest());
  }

  /** As `getLatestBlockhash`: valid for 150 more blocks, like a real cluster's. */
  latestBlockhash(): { slot: number; blockhash: string; lastValidBlockHeight: number } {
    return { slot: this.slotNo, blockhash: this.blockhashOf(this.slotNo), lastValidBlockHeight: this.slotNo + BLOCKHASH_VALID_SLOTS };
  }

  /** The simulated chain as the API's /tx builders reach it in single-process mode. */
  chainAccess(): { recentBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: bigint; slot: number }> } {
    return {
      recentBlockhash: async () => {
        const r = this.latestBlockhash();
        return { blockhash: r.blockhash, lastValidBlockHeight: BigInt(r.lastValidBlockHeight), slot: r.slot };
      },
    };
  }

  private isRecentBlockhash(h: string): boolean {
    for (let s = this.slotNo; s >= Math.max(0, this.slotNo - BLOCKHASH_VALID_SLOTS); s--) if (this.blockhashOf(s) === h) return true;
    return false;
  }

  /**
   * `sendTransaction`: checks the signed transaction as a validator's preflight would
   * (signatures, blockhash, accounts, then the program's own rules against the current
   * state), queues it and returns its signature; it runs at the start of the next block,
   * where the rules are checked again (a failed transaction then lands with its error).
   */
  submit(base64: string): string {
    const s = parseSubmission(base64, this.programId, (h) => this.isRecentBlockhash(h));
    if (this.seenSignatures.has(s.signature)) throw new RpcSubmitError(-32002, 'Transaction simulation failed: This transaction has already been processed', { err: 'AlreadyProcessed', logs: [] });
    const problem = this.userProblem(s);
    if (problem) throw simulationFailed(s.index, programError(problem).code, [`Program log: AnchorError: ${problem}`]);
    this.seenSignatures.add(s.signature);
    this.submitted.push(s);
    return s.signature;
  }

  /** The program's refusal (an IDL error name) of a submitted instruction in the current state. */
  private userProblem(s: Submitted): string | undefined {
    const m = 'market' in s.accounts ? this.markets.get(s.accounts.market!) : undefined;
    switch (s.name) {
      case 'place_order': {
        const a = s.args;
        if (!m || m.mint !== s.accounts.settlement_mint) return 'InvalidAccount';
        if (m.state !== MarketState.Trading) return 'MarketNotTrading';
        if (a.side > 3 || a.orderType > 2) return 'InvalidArgument';
        if (orderPriceProblem(a.priceBps, this.tickSize)) return 'InvalidPrice';
        if (orderQuantityProblem(a.quantity)) return 'InvalidQuantity';
        if (a.side === Side.SellYes || a.side === Side.SellNo) {
          const p = m.positions.get(s.signer);
          const avail = !p ? 0n : a.side === Side.SellYes ? p.yes - p.lockedYes : p.no - p.lockedNo;
          if (avail < a.quantity) return 'InsufficientShares';
        }
        if (a.orderType === OrderType.PostOnly) {
          const q = toCanonical(a.side as Side, a.priceBps);
          const top = (q.bookSide === 0 ? m.asks : m.bids)[0];
          if (top && (q.bookSide === 0 ? q.priceBps >= top.bookPrice : q.priceBps <= top.bookPrice)) return 'PostOnlyWouldCross';
        }
        return undefined;
      }
      case 'cancel_order': {
        if (!m) return 'InvalidAccount';
        const o = [...m.bids, ...m.asks].find((x) => x.orderId === s.args.orderId);
        if (!o) return 'OrderNotFound';
        return o.owner === s.signer ? undefined : 'NotOrderOwner';
      }
      case 'claim_payout': {
        if (!m || m.mint !== s.accounts.settlement_mint) return 'InvalidAccount';
        if (m.state !== MarketState.Resolved && m.state !== MarketState.Closed) return 'MarketNotResolved';
        const p = m.positions.get(s.signer);
        return p && !p.settled ? undefined : 'NothingToClaim';
      }
      case 'claim_referral': {
        const e = this.earnings.get(`${s.signer}:${s.accounts.settlement_mint}`);
        return e && e.accumulated > 0n ? undefined : 'NothingToClaim';
      }
      case 'claim_creator_fees': {
        if (!m || m.mint !== s.accounts.settlement_mint || m.creator !== s.accounts.creator) return 'InvalidAccount';
        if (m.state !== MarketState.Resolved && m.state !== MarketState.Closed) return 'MarketNotResolved';
        return m.creatorFees > 0n ? undefined : 'NothingToClaim';
      }
      default: {
        const never: never = s;
        throw new Error(`unknown instruction ${String(never)}`);
      }
    }
  }

  /** Runs the queued user transactions with the matching engine and the settlement code the simulated traders use. */
  private runSubmitted(t: number, send: Sender): void {
    const queue = this.submitted;
    this.submitted = [];
    for (const s of queue) {
      const as = { signature: s.signature, message: s.message, index: s.index };
      const problem = this.userProblem(s);
      if (problem) {
        send(INSTRUCTION_LOG_NAMES[s.name], [], s.signer, { InstructionError: [s.index, { Custom: programError(problem).code }] }, as);
        continue;
      }
      const m = 'market' in s.accounts ? this.markets.get(s.accounts.market!) : undefined;
      switch (s.name) {
        case 'place_order':
          this.placeOrder(m!, t, send, { owner: s.signer, ...s.args, side: s.args.side as Side, orderType: s.args.orderType as OrderType }, as);
          break;
        case 'cancel_order': {
          const o = [...m!.bids, ...m!.asks].find((x) => x.orderId === s.args.orderId)!;
          this.cancel(m!, o, send, as);
          break;
        }
        case 'claim_payout':
          m!.redeemQueue = m!.redeemQueue?.filter((w) => w !== s.signer) ?? null;
          this.redeem(m!, m!.positions.get(s.signer)!, send, as);
          break;
        case 'claim_referral': {
          const e = this.earnings.get(`${s.signer}:${s.accounts.settlement_mint}`)!;
          const amount = e.accumulated;
          e.accumulated = 0n;
          e.claimed += amount;
          send('ClaimReferral', [
            { kind: 'ReferrerClaimed', data: { referrer: e.wallet, settlementMint: e.mint, tokenAccount: s.accounts.referrer_token_account!, amount } },
          ], e.wallet, undefined, as);
          break;
        }
        case 'claim_creator_fees': {
          const amount = m!.creatorFees;
          m!.creatorFees = 0n;
          const sig = send('ClaimCreatorFees', [
            { kind: 'CreatorFeesClaimed', data: { market: m!.address, creator: m!.creator, creatorTokenAccount: s.accounts.creator_token_account!, caller: s.signer, amount } },
          ], s.signer, undefined, as);
          this.creatorClaims.push({ market_address: m!.address, amount: amount.toString(), tx_signature: sig ?? '' });
          break;
        }
        default: {
          const never: never = s;
          throw new Error(`unknown instruction ${String(never)}`);
        }
      }
    }
  }

  blockTimeOf(slot: number): number {
    return this.startTime + Math.floor(((slot - 1) * this.slotMs) / 1000);
  }

  /** Every feed's Pyth price account address (markets on a third feed name none, D-150). */
  oracleFeeds(): string[] {
    return this.feeds.map((f) => f.address);
  }

  /** A Pyth price account as the chain holds it now, or null (unknown address, not yet published). */
  oracleAccount(address: string): AccountSnapshot | null {
    return this.feeds.find((f) => f.address === address)?.oracle.snapshot() ?? null;
  }

  // ---- randomness ---------------------------------------------------------------------------
  private int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.rng);
  }
  private chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }
  private pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }

  // ---- block production ----------------------------------------------------------------------
  /** Produces the next slot's block (possibly without transactions). */
  nextBlock(): Block {
    this.slotNo += 1;
    const slot = this.slotNo;
    const t = this.blockTimeOf(slot);
    const txs: RawTransaction[] = [];
    const send: Sender = (instruction, events, signer, err, as) => {
      if (!events.length && !as) return;
      this.txCounter += 1;
      // A user's transaction keeps its own signature and message; its events go to the log.
      const via = as ? 'log' : this.emit === 'mixed' ? (this.txCounter % 3 === 0 ? 'cpi' : 'log') : this.emit;
      const tx = buildTransaction({
        programId: this.programId,
        signature: as?.signature ?? signatureOf(`sim:${this.txCounter}:${slot}`),
        slot,
        blockTime: t,
        signer,
        eventAuthority: this.eventAuthority,
        instructionName: instruction,
        events,
        via,
        err,
      });
      if (as) tx.transaction.message = as.message;
      txs.push(tx);
      if (err) this.failed += 1;
      else this.events += events.length;
      return txs[txs.length - 1]!.transaction.signatures[0]!;
    };

    for (const feed of this.feeds) {
      const r = BigInt(this.int(-300, 300));
      feed.price += (feed.price * r) / 1_000_000n;
      feed.oracle.publish(slot, t, feed.price);
    }
    this.lifecycle(t, send);
    this.runSubmitted(t, send);
    this.trading(t, send);
    this.housekeeping(t, send);
    return { slot, blockTime: t, transactions: txs };
  }

  private lifecycle(t: number, send: Sender): void {
    const E = this.epochSeconds;
    this.feeds.forEach((feed, f) => {
      const epoch = Math.floor(t / E);
      for (const e of [epoch, epoch + 1]) {
        const key = `${f}:${e}`;
        if (this.marketsByEpoch.has(key) || (e + 1) * E <= t) continue;
        const address = addressOf(`market:${this.programId}:${f}:${e}`);
        const m: SimMarket = {
          address,
          feed: f,
          marketId: BigInt(e),
          creator: this.wallets[f % this.wallets.length]!,
          mint: this.mints[f % this.mints.length]!,
          tStart: e * E,
          tEnd: (e + 1) * E,
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
          redeemQueue: null,
        };
        this.markets.set(address, m);
        this.marketsByEpoch.set(key, address);
        send('InitializeMarket', [
          {
            kind: 'MarketInitialized',
            data: {
              market: address,
              marketId: m.marketId,
              creator: m.creator,
              oracleFeed: f % 3 === 2 ? null : feed.address,
              oracleFeedId: feed.feedId,
              settlementMint: m.mint,
              durationSeconds: BigInt(E),
              tStart: BigInt(m.tStart),
              tEnd: BigInt(m.tEnd),
              maxConfidenceRatioBps: MAX_CONF_RATIO_BPS,
              initialCollateral: 0n,
            },
          },
        ], m.creator);
      }
    });

    for (const m of this.markets.values()) this.advance(m, t, send);
  }

  /** Moves a market one step along its lifecycle when its time has come. */
  private advance(m: SimMarket, t: number, send: Sender): void {
    switch (m.state) {
      case MarketState.Pending:
      case MarketState.Closed:
        return;
      case MarketState.Created:
        if (t >= m.tStart) this.startTrading(m, t, send);
        return;
      case MarketState.Trading:
        if (t >= m.tEnd) this.endTrading(m, send);
        return;
      case MarketState.Settling:
        if (t >= m.tEnd + 2) this.resolve(m, t, send);
        return;
      case MarketState.Resolved:
        if (m.redeemQueue) this.redeemSome(m, m.redeemQueue, send);
        return;
      default: {
        const never: never = m.state;
        throw new Error(`unknown market state ${String(never)}`);
      }
    }
  }

  private startTrading(m: SimMarket, t: number, send: Sender): void {
    const feed = this.feeds[m.feed]!;
    m.state = MarketState.Trading;
    m.startPrice = feed.price;
    send('StartTrading', [
      { kind: 'TradingStarted', data: { market: m.address, startPrice: feed.price, startPriceConf: feed.price / 5000n, startPriceExpo: PRICE_EXPO, publishTime: BigInt(t) } },
    ], m.creator);
  }

  /** Trading ends: every resting order expires, then the market waits for its price. */
  private endTrading(m: SimMarket, send: Sender): void {
    const events: ProgramEvent[] = [];
    for (const o of [...m.bids, ...m.asks].sort((a, b) => a.seq - b.seq)) {
      events.push({ kind: 'OrderExpired', data: { market: m.address, orderId: o.orderId, owner: o.owner, remainingQuantity: o.quantity - o.filled } });
      this.release(m, o);
      o.status = OrderStatusCode.expired;
    }
    m.bids = [];
    m.asks = [];
    m.state = MarketState.Settling;
    events.push({ kind: 'MarketSettling', data: { market: m.address } });
    send('SettleMarket', events, m.creator);
  }

  private resolve(m: SimMarket, t: number, send: Sender): void {
    const feed = this.feeds[m.feed]!;
    const wide = this.chance(0.04);
    const conf = wide ? feed.price / 20n : feed.price / 5000n;
    const outcome = resolveOutcome({ startPrice: m.startPrice!, endPrice: feed.price, endConf: conf, maxConfidenceRatioBps: MAX_CONF_RATIO_BPS });
    m.state = MarketState.Resolved;
    m.outcome = outcome;
    m.endPrice = feed.price;
    m.redeemQueue = [...m.positions.keys()].filter((w) => this.walletSet.has(w));
    send('ResolveMarket', [
      { kind: 'MarketResolved', data: { market: m.address, endPrice: feed.price, endPriceConf: conf, endPriceExpo: PRICE_EXPO, outcome, publishTime: BigInt(t) } },
    ], m.creator);
  }

  /** Holders redeem a few positions per slot; then the creator may claim, and the market closes. */
  private redeemSome(m: SimMarket, queue: string[], send: Sender): void {
    for (let i = 0; i < 4 && queue.length; i++) {
      const owner = queue.shift()!;
      this.redeem(m, m.positions.get(owner)!, send);
    }
    if (queue.length) return;
    m.redeemQueue = null;
    if (m.creatorFees > 0n && this.chance(0.7)) {
      const amount = m.creatorFees;
      m.creatorFees = 0n;
      const sig = send('ClaimCreatorFees', [
        { kind: 'CreatorFeesClaimed', data: { market: m.address, creator: m.creator, creatorTokenAccount: deriveAccountSync('claim_creator_fees', 'creator_token_account', this.programId, { creator: m.creator, settlement_mint: m.mint }), caller: m.creator, amount } },
      ], m.creator);
      this.creatorClaims.push({ market_address: m.address, amount: amount.toString(), tx_signature: sig ?? '' });
    }
    if (this.chance(0.8)) {
      m.state = MarketState.Closed;
      send('CloseMarket', [{ kind: 'MarketClosed', data: { market: m.address } }], m.creator);
    }
  }

  private redeem(m: SimMarket, p: SimPosition, send: Sender, as?: SentAs): void {
    const outcome = m.outcome!;
    const payout = settlementPayout(outcome, p.yes, p.no);
    p.settled = true;
    p.payout = payout;
    send('ClaimPayout', [
      { kind: 'PositionSettled', data: { market: m.address, owner: p.owner, position: p.address, yesShares: p.yes, noShares: p.no, payout } },
    ], p.owner, undefined, as);
    // Settled-trade accounting, kept independently of the projector: one record per traded side.
    const yesPayout = outcome === Outcome.Yes ? p.yes : outcome === Outcome.Void ? p.yes / 2n : 0n;
    const sides = [
      { shares: p.yes, cost: p.yesCost, payout: yesPayout },
      { shares: p.no, cost: p.noCost, payout: payout - yesPayout },
    ].filter((s) => s.shares > 0n || s.cost !== 0n);
    if (!sides.length) return;
    const st = this.stats.get(p.owner) ?? { trades: 0, wins: 0, losses: 0, pnl: 0n };
    for (const s of sides) {
      const pnl = s.payout - s.cost;
      st.trades += 1;
      st.pnl += pnl;
      if (pnl > 0n) st.wins += 1;
      else st.losses += 1;
    }
    this.stats.set(p.owner, st);
  }

  private trading(t: number, send: Sender): void {
    for (const m of this.markets.values()) {
      if (m.state !== MarketState.Trading) continue;
      const n = this.int(0, Math.max(0, Math.round(this.ordersPerSlot * 2)));
      for (let i = 0; i < n; i++) this.placeRandomOrder(m, t, send);
      if (this.chance(0.25)) {
        // Only simulated traders cancel at random; outside wallets send their own cancel_order.
        const resting = [...m.bids, ...m.asks].filter((o) => this.walletSet.has(o.owner));
        if (resting.length) this.cancel(m, this.pick(resting), send);
      }
    }
  }

  private housekeeping(t: number, send: Sender): void {
    const admin = this.wallets[0]!;
    if (this.chance(0.004)) {
      // Now and then an admin sets an invalid split: it is stored and reported, not refused.
      const invalid = this.chance(0.1);
      const creator = this.int(0, 3000);
      const referral = this.int(0, 2000);
      this.feeCurve = { feeCapBps: this.int(50, 300), decayRateBps: this.int(100, 1000) };
      const split = { protocolShareBps: BPS_SCALE - creator - referral - (invalid ? 7 : 0), creatorShareBps: creator, referralShareBps: referral };
      if (!invalid) this.feeSplit = split;
      this.feeConfigChanges += 1;
      send('SetFeeConfig', [{ kind: 'FeeConfigChanged', data: { ...this.feeCurve, ...split } }], admin);
    }
    if (this.chance(0.003)) {
      this.tickSize = this.pick([1, 5, 10, 25, 50, 100]);
      this.tickSizeChanges += 1;
      send('SetTickSize', [{ kind: 'TickSizeChanged', data: { tickSizeBps: this.tickSize } }], admin);
    }
    if (this.chance(0.03)) {
      const wallet = this.pick(this.wallets);
      const referrer = this.pick(this.wallets);
      if (wallet !== referrer) {
        const expiresAt = t + (this.chance(0.1) ? 30 : 30 * 86_400);
        this.locks.set(wallet, { referrer, expiresAt });
        send('LockReferral', [{ kind: 'ReferralLocked', data: { wallet, referrer, expiresAt: BigInt(expiresAt) } }], wallet);
      }
    }
    if (this.chance(0.01)) {
      const withBalance = [...this.earnings.values()].filter((e) => e.accumulated > 0n);
      if (withBalance.length) {
        const e = this.pick(withBalance);
        const amount = e.accumulated;
        e.accumulated -= amount;
        e.claimed += amount;
        const tokenAccount = deriveAccountSync('claim_referral', 'referrer_token_account', this.programId, { referrer: e.wallet, settlement_mint: e.mint });
        send('ClaimReferral', [
          { kind: 'ReferrerClaimed', data: { referrer: e.wallet, settlementMint: e.mint, tokenAccount, amount } },
        ], e.wallet);
      }
    }
  }

  private cancel(m: SimMarket, o: SimOrder, send: Sender, as?: SentAs): void {
    this.unrest(m, o);
    this.release(m, o);
    o.status = OrderStatusCode.cancelled;
    send('CancelOrder', [{ kind: 'OrderCancelled', data: { market: m.address, orderId: o.orderId, owner: o.owner, remainingQuantity: o.quantity - o.filled } }], o.owner, undefined, as);
  }

  // ---- the order book ------------------------------------------------------------------------
  private readonly positionAddresses = new Map<string, string>();
  /** The position PDA ["position", market, owner], as the place_order builder derives it. */
  private positionAddress(m: SimMarket, owner: string): string {
    const key = `${m.address}:${owner}`;
    let a = this.positionAddresses.get(key);
    if (!a) this.positionAddresses.set(key, (a = deriveAccountSync('place_order', 'position', this.programId, { market: m.address, owner })));
    return a;
  }

  private position(m: SimMarket, owner: string): SimPosition {
    let p = m.positions.get(owner);
    if (!p) {
      p = {
        address: this.positionAddress(m, owner),
        market: m.address,
        owner,
        yes: 0n,
        no: 0n,
        lockedYes: 0n,
        lockedNo: 0n,
        collateral: 0n,
        bought: 0n,
        sold: 0n,
        fees: 0n,
        yesCost: 0n,
        noCost: 0n,
        settled: false,
        payout: 0n,
      };
    }
    return p;
  }

  /** Shares a resting sell order holds back. */
  private release(m: SimMarket, o: SimOrder): void {
    const p = m.positions.get(o.owner);
    if (!p || isBuySide(o.side)) return;
    const rest = o.quantity - o.filled;
    if (o.side === Side.SellYes) p.lockedYes -= rest;
    else p.lockedNo -= rest;
  }

  private unrest(m: SimMarket, o: SimOrder): void {
    const book = o.bookSide === 0 ? m.bids : m.asks;
    const i = book.indexOf(o);
    if (i >= 0) book.splice(i, 1);
  }

  private rest(m: SimMarket, o: SimOrder): void {
    const book = o.bookSide === 0 ? m.bids : m.asks;
    // Price-time priority: bids high to low, asks low to high, older first at a price.
    const better = (a: SimOrder, b: SimOrder) =>
      a.bookPrice !== b.bookPrice ? (o.bookSide === 0 ? a.bookPrice > b.bookPrice : a.bookPrice < b.bookPrice) : a.seq < b.seq;
    let i = book.length;
    while (i > 0 && better(o, book[i - 1]!)) i -= 1;
    book.splice(i, 0, o);
  }

  private roundToTick(p: number): number {
    const tick = this.tickSize;
    const rounded = Math.round(p / tick) * tick;
    return Math.min(BPS_SCALE - tick, Math.max(tick, rounded));
  }

  private placeRandomOrder(m: SimMarket, t: number, send: Sender): void {
    const owner = this.pick(this.wallets);
    const p = this.position(m, owner);
    const feed = this.feeds[m.feed]!;
    const retBps = Number(((feed.price - m.startPrice!) * 10_000n) / m.startPrice!);
    const fairYes = Math.min(9_800, Math.max(200, 5_000 + retBps * 40));
    const availYes = p.yes - p.lockedYes;
    const availNo = p.no - p.lockedNo;
    let side: Side;
    if (availYes > 0n && this.chance(0.3)) side = Side.SellYes;
    else if (availNo > 0n && this.chance(0.3)) side = Side.SellNo;
    else side = this.chance(0.5) ? Side.BuyYes : Side.BuyNo;
    const fairOwn = side === Side.BuyYes || side === Side.SellYes ? fairYes : BPS_SCALE - fairYes;
    const aggressive = isBuySide(side) ? this.int(-400, 250) : this.int(-250, 400);
    const priceBps = this.roundToTick(fairOwn + (isBuySide(side) ? aggressive : -aggressive));
    let quantity = BigInt(this.int(1, 50)) * 100_000n;
    if (side === Side.SellYes) quantity = quantity < availYes ? quantity : availYes;
    if (side === Side.SellNo) quantity = quantity < availNo ? quantity : availNo;
    if (quantity <= 0n) return;
    const roll = this.int(0, 99);
    const orderType = roll < 85 ? OrderType.Limit : roll < 95 ? OrderType.ImmediateOrCancel : OrderType.PostOnly;
    this.placeOrder(m, t, send, { owner, side, priceBps, quantity, orderType });
  }

  /** The program's place_order: match at the makers' prices, rest or cancel the rest. */
  private placeOrder(
    m: SimMarket,
    t: number,
    send: Sender,
    a: { owner: string; side: Side; priceBps: number; quantity: bigint; orderType: OrderType },
    as?: SentAs,
  ): void {
    const { owner, side, priceBps, quantity, orderType } = a;
    const p = this.position(m, owner);
    const quote = toCanonical(side, priceBps);
    const orderId = m.nextOrderId;
    const placed: ProgramEvent = { kind: 'OrderPlaced', data: { market: m.address, orderId, owner, side, priceBps, quantity, orderType } };
    const opposite = quote.bookSide === 0 ? m.asks : m.bids;
    const crossesTop = (o: SimOrder | undefined) => !!o && (quote.bookSide === 0 ? quote.priceBps >= o.bookPrice : quote.priceBps <= o.bookPrice);
    if (orderType === OrderType.PostOnly && crossesTop(opposite[0])) {
      // The program refuses a crossing post-only order: a failed transaction whose log
      // still shows the event it emitted before failing. Indexers must ignore it.
      send('PlaceOrder', [placed], owner, { InstructionError: [as?.index ?? 1, { Custom: programError('PostOnlyWouldCross').code }] }, as);
      return;
    }
    m.nextOrderId += 1n;
    this.orderSeq += 1;
    const order: SimOrder = {
      market: m.address, orderId, owner, side, priceBps, quantity, filled: 0n,
      status: OrderStatusCode.open, orderType, bookSide: quote.bookSide, bookPrice: quote.priceBps, seq: this.orderSeq,
    };
    this.allOrders.push(order);
    if (!m.positions.has(owner) && !isBuySide(side)) throw new Error('sell without a position');
    const events: ProgramEvent[] = [placed];
    if (side === Side.SellYes) p.lockedYes += quantity;
    if (side === Side.SellNo) p.lockedNo += quantity;

    while (order.filled < order.quantity && crossesTop(opposite[0])) {
      const maker = opposite[0]!;
      if (maker.owner === owner) {
        // Self-trade prevention: the incoming order's rest is cancelled.
        break;
      }
      const q = (() => {
        const a = order.quantity - order.filled;
        const b = maker.quantity - maker.filled;
        return a < b ? a : b;
      })();
      this.fill(m, maker, order, q, t, events);
      if (maker.filled === maker.quantity) {
        maker.status = OrderStatusCode.filled;
        opposite.shift();
      }
    }
    const rest = order.quantity - order.filled;
    if (rest === 0n) {
      order.status = OrderStatusCode.filled;
    } else if (orderType === OrderType.ImmediateOrCancel || (opposite[0] && crossesTop(opposite[0]))) {
      this.release(m, order);
      order.status = OrderStatusCode.cancelled;
      events.push({ kind: 'OrderCancelled', data: { market: m.address, orderId, owner, remainingQuantity: rest } });
    } else {
      this.rest(m, order);
    }
    send('PlaceOrder', events, owner, undefined, as);
  }

  /**
   * One match of `q` shares at the maker's price: the fee, the positions' and market's
   * bookkeeping, the events the program emits and the simulator's own record of the trade.
   */
  private fill(m: SimMarket, maker: SimOrder, taker: SimOrder, q: bigint, t: number, events: ProgramEvent[]): void {
    const price = maker.bookPrice;
    const fee = takerFee(this.feeCurve, price, q);
    const lock = this.locks.get(taker.owner);
    const referrer = lock && lock.expiresAt > t ? lock.referrer : null;
    const parts = splitFee(fee, this.feeSplit, referrer !== null);
    this.bookFill(m, maker, taker, q, price, fee);
    const filled: Extract<ProgramEvent, { kind: 'OrderFilled' }>['data'] = {
      market: m.address,
      makerOrderId: maker.orderId,
      takerOrderId: taker.orderId,
      maker: maker.owner,
      taker: taker.owner,
      makerPosition: this.position(m, maker.owner).address,
      takerPosition: this.position(m, taker.owner).address,
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
    this.recordTrade(filled, events.length);
    events.push({ kind: 'OrderFilled', data: filled });
    this.creditFees(m, taker, parts, referrer, events);
  }

  /** Both sides' positions (shares, cost basis, collateral, fees) and the market's totals. */
  private bookFill(m: SimMarket, maker: SimOrder, taker: SimOrder, q: bigint, price: number, fee: bigint): void {
    for (const [o, paid] of [[maker, 0n], [taker, fee]] as const) {
      const p = this.position(m, o.owner);
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
      if (e.yesDelta !== 0n) p.yesCost += e.cashDelta;
      else p.noCost += e.cashDelta;
      m.yesShares += e.yesDelta;
      m.noShares += e.noDelta;
      if (p.yes < 0n || p.no < 0n) throw new Error('simulator produced a negative balance');
      o.filled += q;
    }
    m.volume += q;
    m.trades += 1;
  }

  /** The trade as the `trades` table must hold it (ground truth). */
  private recordTrade(d: Extract<ProgramEvent, { kind: 'OrderFilled' }>['data'], eventIndex: number): void {
    this.tradeRows.push({
      market_address: d.market,
      maker_order_id: d.makerOrderId.toString(),
      taker_order_id: d.takerOrderId.toString(),
      maker: d.maker,
      taker: d.taker,
      maker_side: d.makerSide,
      taker_side: d.takerSide,
      price_bps: d.priceBps,
      quantity: d.quantity.toString(),
      taker_fee: d.takerFee.toString(),
      fee_protocol: d.feeProtocol.toString(),
      fee_creator: d.feeCreator.toString(),
      fee_referral: d.feeReferral.toString(),
      protocol_treasury_index: d.protocolTreasuryIndex,
      referrer: d.referrer,
      event_index: eventIndex,
    });
  }

  /** The creator's and the referrer's shares of the fee, with their events. */
  private creditFees(m: SimMarket, taker: SimOrder, parts: FeeParts, referrer: string | null, events: ProgramEvent[]): void {
    if (parts.creator > 0n) {
      m.creatorFees += parts.creator;
      m.creatorEarned += parts.creator;
      events.push({ kind: 'CreatorFeesAccrued', data: { market: m.address, creator: m.creator, amount: parts.creator } });
    }
    if (referrer && parts.referral > 0n) {
      const key = `${referrer}:${m.mint}`;
      const e = this.earnings.get(key) ?? { wallet: referrer, mint: m.mint, accumulated: 0n, earned: 0n, claimed: 0n };
      e.accumulated += parts.referral;
      e.earned += parts.referral;
      this.earnings.set(key, e);
      events.push({ kind: 'ReferrerCredited', data: { referrer, referee: taker.owner, market: m.address, settlementMint: m.mint, amount: parts.referral } });
    }
  }

  /** What a client reads off the chain to build a transaction for a market. */
  marketAccounts(): { address: string; marketId: bigint; state: MarketState; mint: string; creator: string; tEnd: number }[] {
    return [...this.markets.values()].map((m) => ({ address: m.address, marketId: m.marketId, state: m.state, mint: m.mint, creator: m.creator, tEnd: m.tEnd }));
  }

  get tickSizeBps(): number {
    return this.tickSize;
  }

  // ---- ground truth ----------------------------------------------------------------------------
  truth(): Truth {
    const markets = [...this.markets.values()];
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
    return {
      markets: markets.map((m) => ({
        address: m.address,
        market_id: m.marketId.toString(),
        state: m.state,
        outcome: m.outcome,
        start_price: m.startPrice?.toString() ?? null,
        end_price: m.endPrice?.toString() ?? null,
        total_volume: m.volume.toString(),
        total_trades: String(m.trades),
        total_positions: String(m.positions.size),
        total_yes_shares: m.yesShares.toString(),
        total_no_shares: m.noShares.toString(),
        best_bid: m.bids[0]?.bookPrice ?? null,
        best_ask: m.asks[0]?.bookPrice ?? null,
        accumulated_creator_fees: m.creatorFees.toString(),
        creator_fees_earned: m.creatorEarned.toString(),
      })),
      orders: this.allOrders.map((o) => ({
        market_address: o.market,
        order_id: o.orderId.toString(),
        owner: o.owner,
        side_code: o.side,
        price_bps: o.priceBps,
        quantity: o.quantity.toString(),
        filled_quantity: o.filled.toString(),
        status_code: o.status,
        order_type: o.orderType,
      })),
      levels: [...levels.values()].map((l) => ({ ...l, quantity: l.quantity.toString() })),
      positions: markets.flatMap((m) =>
        [...m.positions.values()].map((p) => ({
          address: p.address,
          market_address: p.market,
          owner: p.owner,
          yes_shares: p.yes.toString(),
          no_shares: p.no.toString(),
          collateral_deposited: p.collateral.toString(),
          total_bought: p.bought.toString(),
          total_sold: p.sold.toString(),
          fees_paid: p.fees.toString(),
          settled: p.settled,
          payout: p.payout.toString(),
        })),
      ),
      trades: [...this.tradeRows],
      referralLocks: [...this.locks.entries()].map(([wallet, l]) => ({ wallet, referrer: l.referrer })),
      referrerEarnings: [...this.earnings.values()].map((e) => ({
        wallet: e.wallet,
        settlement_mint: e.mint,
        accumulated: e.accumulated.toString(),
        total_earned: e.earned.toString(),
        total_claimed: e.claimed.toString(),
      })),
      userStats: [...this.stats.entries()].map(([wallet, s]) => ({
        wallet,
        total_trades: s.trades,
        winning_trades: s.wins,
        losing_trades: s.losses,
        total_pnl: s.pnl.toString(),
      })),
      feeConfigChanges: this.feeConfigChanges,
      tickSizeChanges: this.tickSizeChanges,
      creatorClaims: [...this.creatorClaims],
      events: this.events,
      transactions: this.txCounter,
      failedTransactions: this.failed,
    };
  }
}

/** A user's transaction keeps its own signature and message when the chain runs it. */
interface SentAs {
  signature: string;
  message: RawTransaction['transaction']['message'];
  /** The program instruction's index in the message. */
  index: number;
}
type Sender = (instruction: string, events: ProgramEvent[], signer: string, err?: unknown, as?: SentAs) => string | undefined;

/** A blockhash is accepted for this many blocks after its own, as on a real cluster. */
export const BLOCKHASH_VALID_SLOTS = 150;

/** The `Program log: Instruction: <Name>` line Anchor writes for each instruction. */
const INSTRUCTION_LOG_NAMES: Record<Submitted['name'], string> = {
  place_order: 'PlaceOrder',
  cancel_order: 'CancelOrder',
  claim_payout: 'ClaimPayout',
  claim_referral: 'ClaimReferral',
  claim_creator_fees: 'ClaimCreatorFees',
};
