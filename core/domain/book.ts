import { BPS_SCALE, Side } from './codes';

/** Side of the canonical YES book. */
export const BookSide = { Bid: 0, Ask: 1 } as const;
export type BookSide = (typeof BookSide)[keyof typeof BookSide];

export interface CanonicalQuote {
  bookSide: BookSide;
  /** YES price in bps. */
  priceBps: number;
}

/**
 * Every order rests on one YES book: buying YES at p bids p; selling YES at p asks p;
 * buying NO at q is the same as selling YES at 10000-q (an ask); selling NO at q is the
 * same as buying YES at 10000-q (a bid).
 */
export function toCanonical(side: Side, priceBps: number): CanonicalQuote {
  switch (side) {
    case Side.BuyYes:
      return { bookSide: BookSide.Bid, priceBps };
    case Side.SellYes:
      return { bookSide: BookSide.Ask, priceBps };
    case Side.BuyNo:
      return { bookSide: BookSide.Ask, priceBps: BPS_SCALE - priceBps };
    case Side.SellNo:
      return { bookSide: BookSide.Bid, priceBps: BPS_SCALE - priceBps };
    default: {
      const never: never = side;
      throw new Error(`unknown side ${String(never)}`);
    }
  }
}

/** The price in the order's own terms (YES price for YES sides, NO price for NO sides). */
export function fromCanonical(side: Side, yesPriceBps: number): number {
  return side === Side.BuyNo || side === Side.SellNo ? BPS_SCALE - yesPriceBps : yesPriceBps;
}

/** Whether a bid and an ask on the canonical book cross (can trade). */
export const crosses = (bidBps: number, askBps: number): boolean => bidBps >= askBps;

/**
 * currentYesPrice of spec 2.7: mid of best bid and best ask; with one side, that side;
 * with neither, the fallback (last trade price, else 5000).
 */
export function currentYesPrice(bestBid: number | null, bestAsk: number | null, fallback: number | null): number {
  if (bestBid !== null && bestAsk !== null) return Math.round((bestBid + bestAsk) / 2);
  if (bestBid !== null) return bestBid;
  if (bestAsk !== null) return bestAsk;
  return fallback ?? BPS_SCALE / 2;
}

/**
 * Order bounds the program enforces (D-141) and `/tx/place-order` checks before building:
 * quantity in share base units, price a multiple of the tick size within 1-9,999 bps.
 */
export const ORDER_QUANTITY_MIN = 1n;
export const ORDER_QUANTITY_MAX = 1_000_000_000_000n;

/** Why a limit price is refused at a tick size, or undefined when it is valid. */
export function orderPriceProblem(priceBps: number, tickSizeBps: number): string | undefined {
  if (!Number.isInteger(priceBps) || priceBps < 1 || priceBps > 9_999) return 'must be an integer from 1 to 9999 bps';
  if (priceBps % tickSizeBps !== 0) return `must be a multiple of the tick size (${tickSizeBps} bps)`;
  return undefined;
}

export const orderQuantityProblem = (q: bigint): string | undefined =>
  q < ORDER_QUANTITY_MIN || q > ORDER_QUANTITY_MAX ? `must be from ${ORDER_QUANTITY_MIN} to ${ORDER_QUANTITY_MAX} base units` : undefined;
