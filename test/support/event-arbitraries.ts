import bs58 from 'bs58';
import fc from 'fast-check';
import type { EventDataByKind, EventKind, ProgramEvent } from '../../core/events';

export const pubkey = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b));
const u8 = fc.integer({ min: 0, max: 255 });
const u16 = fc.integer({ min: 0, max: 65_535 });
const i32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
const i64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const optPubkey = fc.option(pubkey, { nil: null });

/** Arbitrary payloads over each field's whole range, one arbitrary per event kind. */
export const eventArbitraries: { [K in EventKind]: fc.Arbitrary<EventDataByKind[K]> } = {
  MarketInitialized: fc.record({
    market: pubkey,
    marketId: u64,
    creator: pubkey,
    oracleFeed: optPubkey,
    oracleFeedId: hex32,
    settlementMint: pubkey,
    durationSeconds: u64,
    tStart: i64,
    tEnd: i64,
    maxConfidenceRatioBps: u16,
    initialCollateral: u64,
  }),
  TradingStarted: fc.record({ market: pubkey, startPrice: i64, startPriceConf: u64, startPriceExpo: i32, publishTime: i64 }),
  MarketSettling: fc.record({ market: pubkey }),
  MarketResolved: fc.record({ market: pubkey, endPrice: i64, endPriceConf: u64, endPriceExpo: i32, outcome: u8, publishTime: i64 }),
  MarketClosed: fc.record({ market: pubkey }),
  OrderPlaced: fc.record({ market: pubkey, orderId: u64, owner: pubkey, side: u8, priceBps: u16, quantity: u64, orderType: u8 }),
  OrderFilled: fc.record({
    market: pubkey,
    makerOrderId: u64,
    takerOrderId: u64,
    maker: pubkey,
    taker: pubkey,
    makerPosition: pubkey,
    takerPosition: pubkey,
    makerSide: u8,
    takerSide: u8,
    priceBps: u16,
    quantity: u64,
    takerFee: u64,
    feeProtocol: u64,
    feeCreator: u64,
    feeReferral: u64,
    protocolTreasuryIndex: u8,
    referrer: optPubkey,
  }),
  OrderCancelled: fc.record({ market: pubkey, orderId: u64, owner: pubkey, remainingQuantity: u64 }),
  OrderExpired: fc.record({ market: pubkey, orderId: u64, owner: pubkey, remainingQuantity: u64 }),
  PositionSettled: fc.record({ market: pubkey, owner: pubkey, position: pubkey, yesShares: u64, noShares: u64, payout: u64 }),
  FeeConfigChanged: fc.record({ feeCapBps: u16, decayRateBps: u16, protocolShareBps: u16, creatorShareBps: u16, referralShareBps: u16 }),
  TickSizeChanged: fc.record({ tickSizeBps: u16 }),
  ReferralLocked: fc.record({ wallet: pubkey, referrer: pubkey, expiresAt: i64 }),
  ReferrerCredited: fc.record({ referrer: pubkey, referee: pubkey, market: pubkey, settlementMint: pubkey, amount: u64 }),
  ReferrerClaimed: fc.record({ referrer: pubkey, settlementMint: pubkey, tokenAccount: pubkey, amount: u64 }),
  CreatorFeesAccrued: fc.record({ market: pubkey, creator: pubkey, amount: u64 }),
  CreatorFeesClaimed: fc.record({ market: pubkey, creator: pubkey, creatorTokenAccount: pubkey, caller: pubkey, amount: u64 }),
};

export const anyEvent: fc.Arbitrary<ProgramEvent> = fc.oneof(
  ...(Object.keys(eventArbitraries) as EventKind[]).map((kind) =>
    (eventArbitraries[kind] as fc.Arbitrary<unknown>).map((data) => ({ kind, data }) as ProgramEvent),
  ),
);
