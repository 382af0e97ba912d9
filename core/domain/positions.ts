import { BPS_SCALE, Outcome, Side } from './codes';

/**
 * What one side of a fill does to its position. A share pays one base unit if its outcome
 * wins, so q YES shares at YES price p cost q*p/10000 and q NO shares cost q*(10000-p)/10000
 * (rounded up for the buyer, down for the seller: the program never pays out dust it did
 * not take in).
 */
export interface FillEffect {
  yesDelta: bigint;
  noDelta: bigint;
  /** Collateral paid in (positive) or taken out (negative), before fees. */
  cashDelta: bigint;
  bought: bigint;
  sold: bigint;
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

export function fillEffect(side: Side, yesPriceBps: number, quantity: bigint): FillEffect {
  const scale = BigInt(BPS_SCALE);
  const p = BigInt(yesPriceBps);
  const noP = scale - p;
  switch (side) {
    case Side.BuyYes: {
      const cost = ceilDiv(quantity * p, scale);
      return { yesDelta: quantity, noDelta: 0n, cashDelta: cost, bought: cost, sold: 0n };
    }
    case Side.SellYes: {
      const proceeds = (quantity * p) / scale;
      return { yesDelta: -quantity, noDelta: 0n, cashDelta: -proceeds, bought: 0n, sold: proceeds };
    }
    case Side.BuyNo: {
      const cost = ceilDiv(quantity * noP, scale);
      return { yesDelta: 0n, noDelta: quantity, cashDelta: cost, bought: cost, sold: 0n };
    }
    case Side.SellNo: {
      const proceeds = (quantity * noP) / scale;
      return { yesDelta: 0n, noDelta: -quantity, cashDelta: -proceeds, bought: 0n, sold: proceeds };
    }
    default: {
      const never: never = side;
      throw new Error(`unknown side ${String(never)}`);
    }
  }
}

/** Redeemable payout of a settled position. A void market refunds both sides at half. */
export function settlementPayout(outcome: Outcome, yesShares: bigint, noShares: bigint): bigint {
  switch (outcome) {
    case Outcome.Yes:
      return yesShares;
    case Outcome.No:
      return noShares;
    case Outcome.Void:
      return (yesShares + noShares) / 2n;
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${String(never)}`);
    }
  }
}

/** Outcome of a resolved market from its prices (decision D-1). */
export function resolveOutcome(args: {
  startPrice: bigint;
  endPrice: bigint;
  endConf: bigint;
  maxConfidenceRatioBps: number;
}): Outcome {
  const absEnd = args.endPrice < 0n ? -args.endPrice : args.endPrice;
  if (absEnd === 0n || args.endConf * BigInt(BPS_SCALE) > absEnd * BigInt(args.maxConfidenceRatioBps)) {
    return Outcome.Void;
  }
  return args.endPrice > args.startPrice ? Outcome.Yes : Outcome.No;
}
