import { BPS_SCALE } from './codes';

export interface FeeCurve {
  feeCapBps: number;
  decayRateBps: number;
}

export interface FeeSplit {
  protocolShareBps: number;
  creatorShareBps: number;
  referralShareBps: number;
}

/**
 * fee_bps(price) = min(fee_cap_bps, decay_rate_bps * (10000 - price) / 10000), in integer
 * bps rounded down (the program's integer arithmetic): highest near price 0, zero at 10000.
 */
export function feeBps(curve: FeeCurve, priceBps: number): number {
  if (!Number.isInteger(priceBps) || priceBps < 0 || priceBps > BPS_SCALE) {
    throw new RangeError(`price ${priceBps} is outside [0, ${BPS_SCALE}]`);
  }
  return Math.min(curve.feeCapBps, Math.floor((curve.decayRateBps * (BPS_SCALE - priceBps)) / BPS_SCALE));
}

/** A three-way split is valid when its shares are each in [0, 10000] and sum to 10000. */
export function isValidFeeSplit(split: FeeSplit): boolean {
  const parts = [split.protocolShareBps, split.creatorShareBps, split.referralShareBps];
  return (
    parts.every((p) => Number.isInteger(p) && p >= 0 && p <= BPS_SCALE) &&
    parts.reduce((a, b) => a + b, 0) === BPS_SCALE
  );
}

export interface FeeParts {
  protocol: bigint;
  creator: bigint;
  referral: bigint;
}

/**
 * Splits a taker fee. Creator and referral parts round down; the protocol takes the
 * remainder, so the parts always add up to the fee. Without a referrer the referral share
 * goes to the protocol.
 */
export function splitFee(fee: bigint, split: FeeSplit, hasReferrer: boolean): FeeParts {
  const scale = BigInt(BPS_SCALE);
  const creator = (fee * BigInt(split.creatorShareBps)) / scale;
  const referral = hasReferrer ? (fee * BigInt(split.referralShareBps)) / scale : 0n;
  return { protocol: fee - creator - referral, creator, referral };
}

/** Taker fee for a fill of `notional` base units at a YES price. */
export function takerFee(curve: FeeCurve, yesPriceBps: number, notional: bigint): bigint {
  return (notional * BigInt(feeBps(curve, yesPriceBps))) / BigInt(BPS_SCALE);
}
