import { DEFAULT_FEE_CONFIG, DEFAULT_TICK_SIZE_BPS, isBuySide, MarketState, Side, type FeeSplit, type Outcome } from '../../core/domain';
import { deriveAccountSync, derivePdaSync } from '../../core/tx';

/**
 * The market program's state: what its accounts would hold on a real chain (the config, one
 * account per market, its order book, positions, referral locks and earnings). Only the
 * program's instruction handlers change it; everyone else reads it, as a client reads
 * accounts.
 */
export interface Order {
  market: string;
  orderId: bigint;
  owner: string;
  side: Side;
  priceBps: number;
  quantity: bigint;
  filled: bigint;
  status: number;
  orderType: number;
  /** Canonical YES book: 0 bids, 1 asks, at `bookPrice`. */
  bookSide: number;
  bookPrice: number;
  /** Placement order across the program: time priority. */
  seq: number;
}

export interface Position {
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
  settled: boolean;
  payout: bigint;
}

export interface Market {
  address: string;
  marketId: bigint;
  creator: string;
  mint: string;
  oracleFeed: string | null;
  tStart: number;
  tEnd: number;
  maxConfidenceRatioBps: number;
  state: MarketState;
  outcome: Outcome | null;
  startPrice: bigint | null;
  endPrice: bigint | null;
  nextOrderId: bigint;
  /** Price-time priority: bids high to low, asks low to high, older first at a price. */
  bids: Order[];
  asks: Order[];
  volume: bigint;
  trades: number;
  yesShares: bigint;
  noShares: bigint;
  creatorFees: bigint;
  creatorEarned: bigint;
  /** Positions with shares traded, by owner, in the order they were opened. */
  positions: Map<string, Position>;
}

export interface Earnings {
  wallet: string;
  mint: string;
  accumulated: bigint;
  earned: bigint;
  claimed: bigint;
}

export interface ProgramState {
  readonly programId: string;
  /** Anchor's emit_cpi signer: the PDA ["__event_authority"] of the program. */
  readonly eventAuthority: string;
  /** The config's authority: the one signer of set_fee_config and set_tick_size. */
  readonly admin: string;
  markets: Map<string, Market>;
  orderSeq: number;
  locks: Map<string, { referrer: string; expiresAt: number }>;
  /** By `${wallet}:${mint}`. */
  earnings: Map<string, Earnings>;
  feeCurve: { feeCapBps: number; decayRateBps: number };
  feeSplit: FeeSplit;
  tickSize: number;
}

export function createProgramState(programId: string, admin: string): ProgramState {
  return {
    programId,
    eventAuthority: derivePdaSync(programId, [Buffer.from('__event_authority')]),
    admin,
    markets: new Map(),
    orderSeq: 0,
    locks: new Map(),
    earnings: new Map(),
    feeCurve: { ...DEFAULT_FEE_CONFIG },
    feeSplit: { protocolShareBps: 7000, creatorShareBps: 2000, referralShareBps: 1000 },
    tickSize: DEFAULT_TICK_SIZE_BPS,
  };
}

const positionAddresses = new Map<string, string>();
/** The position PDA ["position", market, owner], as the place_order builder derives it. */
export function positionAddress(programId: string, market: string, owner: string): string {
  const key = `${programId}:${market}:${owner}`;
  let a = positionAddresses.get(key);
  if (!a) {
    if (positionAddresses.size >= 100_000) positionAddresses.clear();
    positionAddresses.set(key, (a = deriveAccountSync('place_order', 'position', programId, { market, owner })));
  }
  return a;
}

/** The owner's position in a market, or a new empty one (opened in the market by its first fill). */
export function positionOf(s: ProgramState, m: Market, owner: string): Position {
  return (
    m.positions.get(owner) ?? {
      address: positionAddress(s.programId, m.address, owner),
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
      settled: false,
      payout: 0n,
    }
  );
}

/** Frees the shares a resting sell order held back. */
export function release(m: Market, o: Order): void {
  const p = m.positions.get(o.owner);
  if (!p || isBuySide(o.side)) return;
  const rest = o.quantity - o.filled;
  if (o.side === Side.SellYes) p.lockedYes -= rest;
  else p.lockedNo -= rest;
}

export function unrest(m: Market, o: Order): void {
  const book = o.bookSide === 0 ? m.bids : m.asks;
  const i = book.indexOf(o);
  if (i >= 0) book.splice(i, 1);
}

export function rest(m: Market, o: Order): void {
  const book = o.bookSide === 0 ? m.bids : m.asks;
  const better = (a: Order, b: Order) =>
    a.bookPrice !== b.bookPrice ? (o.bookSide === 0 ? a.bookPrice > b.bookPrice : a.bookPrice < b.bookPrice) : a.seq < b.seq;
  let i = book.length;
  while (i > 0 && better(o, book[i - 1]!)) i -= 1;
  book.splice(i, 0, o);
}
