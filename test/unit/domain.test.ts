import fc from 'fast-check';
import {
  BookSide,
  BPS_SCALE,
  Outcome,
  Side,
  currentYesPrice,
  feeBps,
  fillEffect,
  fromCanonical,
  isValidFeeSplit,
  resolveOutcome,
  settlementPayout,
  splitFee,
  takerFee,
  toCanonical,
  OrderStatusCode,
  orderStatusFromCode,
  ORDER_STATUSES,
} from '../../core/domain';

const price = fc.integer({ min: 0, max: BPS_SCALE });
const side = fc.constantFrom(Side.BuyYes, Side.SellYes, Side.BuyNo, Side.SellNo);
const qty = fc.bigInt({ min: 1n, max: 2n ** 64n - 1n });
const curve = fc.record({ feeCapBps: fc.integer({ min: 0, max: BPS_SCALE }), decayRateBps: fc.integer({ min: 0, max: BPS_SCALE }) });

describe('canonical YES book', () => {
  it('places each side as the spec says', () => {
    fc.assert(
      fc.property(price, (p) => {
        expect(toCanonical(Side.BuyYes, p)).toEqual({ bookSide: BookSide.Bid, priceBps: p });
        expect(toCanonical(Side.SellYes, p)).toEqual({ bookSide: BookSide.Ask, priceBps: p });
        expect(toCanonical(Side.BuyNo, p)).toEqual({ bookSide: BookSide.Ask, priceBps: BPS_SCALE - p });
        expect(toCanonical(Side.SellNo, p)).toEqual({ bookSide: BookSide.Bid, priceBps: BPS_SCALE - p });
      }),
    );
  });

  it('keeps every canonical price in [0, 10000] and round-trips to the order price', () => {
    fc.assert(
      fc.property(side, price, (s, p) => {
        const c = toCanonical(s, p);
        expect(c.priceBps).toBeGreaterThanOrEqual(0);
        expect(c.priceBps).toBeLessThanOrEqual(BPS_SCALE);
        expect(fromCanonical(s, c.priceBps)).toBe(p);
      }),
    );
  });

  it('puts buy sides of YES and sells of NO on the bid', () => {
    expect(toCanonical(Side.SellNo, 3000).bookSide).toBe(toCanonical(Side.BuyYes, 7000).bookSide);
    expect(toCanonical(Side.SellNo, 3000).priceBps).toBe(7000);
  });

  it('computes currentYesPrice as the mid with fallbacks', () => {
    expect(currentYesPrice(4000, 6001, null)).toBe(5001);
    expect(currentYesPrice(4000, null, 100)).toBe(4000);
    expect(currentYesPrice(null, 6000, 100)).toBe(6000);
    expect(currentYesPrice(null, null, 4200)).toBe(4200);
    expect(currentYesPrice(null, null, null)).toBe(5000);
  });
});

describe('fee curve', () => {
  it('is min(cap, decay*(10000-price)/10000)', () => {
    fc.assert(
      fc.property(curve, price, (c, p) => {
        const f = feeBps(c, p);
        expect(f).toBe(Math.min(c.feeCapBps, Math.floor((c.decayRateBps * (BPS_SCALE - p)) / BPS_SCALE)));
        expect(f).toBeLessThanOrEqual(c.feeCapBps);
        expect(f).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('never rises with price: highest near 0, zero at 10000', () => {
    fc.assert(
      fc.property(curve, price, price, (c, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        expect(feeBps(c, lo)).toBeGreaterThanOrEqual(feeBps(c, hi));
      }),
    );
    fc.assert(fc.property(curve, (c) => expect(feeBps(c, BPS_SCALE)).toBe(0)));
  });

  it('uses the spec defaults as expected: 200 cap, 600 decay', () => {
    const d = { feeCapBps: 200, decayRateBps: 600 };
    expect(feeBps(d, 0)).toBe(200);
    expect(feeBps(d, 5000)).toBe(200);
    expect(feeBps(d, 7000)).toBe(180);
    expect(feeBps(d, 9900)).toBe(6);
  });

  it('rejects prices outside [0, 10000]', () => {
    expect(() => feeBps({ feeCapBps: 1, decayRateBps: 1 }, -1)).toThrow(RangeError);
    expect(() => feeBps({ feeCapBps: 1, decayRateBps: 1 }, 10001)).toThrow(RangeError);
    expect(() => feeBps({ feeCapBps: 1, decayRateBps: 1 }, 1.5)).toThrow(RangeError);
  });

  it('charges the taker fee on notional, rounded down', () => {
    expect(takerFee({ feeCapBps: 200, decayRateBps: 600 }, 5000, 1_000_000n)).toBe(20_000n);
    expect(takerFee({ feeCapBps: 200, decayRateBps: 600 }, 5000, 49n)).toBe(0n);
  });
});

describe('fee split', () => {
  const share = fc.integer({ min: 0, max: BPS_SCALE });
  it('is valid exactly when three shares in range sum to 10000', () => {
    fc.assert(
      fc.property(share, share, share, (a, b, c) => {
        expect(isValidFeeSplit({ protocolShareBps: a, creatorShareBps: b, referralShareBps: c })).toBe(a + b + c === BPS_SCALE);
      }),
    );
    expect(isValidFeeSplit({ protocolShareBps: 7000, creatorShareBps: 2000, referralShareBps: 1000 })).toBe(true);
    expect(isValidFeeSplit({ protocolShareBps: 10001, creatorShareBps: -1, referralShareBps: 0 })).toBe(false);
  });

  it('splits a fee into parts that add up to it exactly, none negative', () => {
    const validSplit = fc
      .tuple(share, share)
      .filter(([a, b]) => a + b <= BPS_SCALE)
      .map(([a, b]) => ({ protocolShareBps: BPS_SCALE - a - b, creatorShareBps: a, referralShareBps: b }));
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), validSplit, fc.boolean(), (fee, split, ref) => {
        const parts = splitFee(fee, split, ref);
        expect(parts.protocol + parts.creator + parts.referral).toBe(fee);
        expect(parts.protocol >= 0n && parts.creator >= 0n && parts.referral >= 0n).toBe(true);
        if (!ref) expect(parts.referral).toBe(0n);
      }),
    );
  });
});

describe('position math', () => {
  it('never lets a matched buy and sell create money', () => {
    fc.assert(
      fc.property(price, qty, (p, q) => {
        const buyer = fillEffect(Side.BuyYes, p, q);
        const seller = fillEffect(Side.SellYes, p, q);
        expect(buyer.yesDelta + seller.yesDelta).toBe(0n);
        // The buyer pays at least what the seller receives.
        expect(buyer.cashDelta + seller.cashDelta >= 0n).toBe(true);
        expect(buyer.cashDelta + seller.cashDelta <= 1n).toBe(true);
      }),
    );
  });

  it('collateralises a minted YES/NO pair fully', () => {
    fc.assert(
      fc.property(price, qty, (p, q) => {
        const yes = fillEffect(Side.BuyYes, p, q);
        const no = fillEffect(Side.BuyNo, p, q);
        const paid = yes.cashDelta + no.cashDelta;
        expect(paid >= q && paid <= q + 2n).toBe(true);
        expect(yes.yesDelta).toBe(q);
        expect(no.noDelta).toBe(q);
      }),
    );
  });

  it('pays the winning side one unit per share, and half of all shares on void', () => {
    expect(settlementPayout(Outcome.Yes, 10n, 4n)).toBe(10n);
    expect(settlementPayout(Outcome.No, 10n, 4n)).toBe(4n);
    expect(settlementPayout(Outcome.Void, 10n, 5n)).toBe(7n);
  });

  it('resolves YES on a strictly higher end price, VOID on a wide confidence', () => {
    const base = { startPrice: 100_000n, endConf: 10n, maxConfidenceRatioBps: 100 };
    expect(resolveOutcome({ ...base, endPrice: 100_001n })).toBe(Outcome.Yes);
    expect(resolveOutcome({ ...base, endPrice: 100_000n })).toBe(Outcome.No);
    expect(resolveOutcome({ ...base, endPrice: 99_000n })).toBe(Outcome.No);
    expect(resolveOutcome({ ...base, endPrice: 100_001n, endConf: 1_001n })).toBe(Outcome.Void);
  });
});

describe('order status codes', () => {
  it('map one to one with the status names', () => {
    ORDER_STATUSES.forEach((s) => expect(orderStatusFromCode(OrderStatusCode[s])).toBe(s));
    expect(OrderStatusCode.open).toBe(0);
    expect(orderStatusFromCode(6)).toBeUndefined();
  });
});
