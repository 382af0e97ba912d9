/** Market states (spec 3.1). */
export const MarketState = {
  Pending: 0,
  Created: 1,
  Trading: 2,
  Settling: 3,
  Resolved: 4,
  Closed: 5,
} as const;
export type MarketState = (typeof MarketState)[keyof typeof MarketState];
export const MARKET_STATE_NAMES = ['pending', 'created', 'trading', 'settling', 'resolved', 'closed'] as const;

/**
 * Outcome (decision D-1 in docs/decisions.md): 1 YES (end price above start price), 0 NO,
 * 2 void (oracle confidence too wide; both sides refunded).
 */
export const Outcome = { No: 0, Yes: 1, Void: 2 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];
export const OUTCOME_LABELS: Record<Outcome, string> = { 0: 'NO', 1: 'YES', 2: 'VOID' };

/** Order sides (spec 2.6 sideCode). */
export const Side = { BuyYes: 0, SellYes: 1, BuyNo: 2, SellNo: 3 } as const;
export type Side = (typeof Side)[keyof typeof Side];
export const SIDE_LABELS = ['buy_yes', 'sell_yes', 'buy_no', 'sell_no'] as const;
export type SideLabel = (typeof SIDE_LABELS)[number];

export const isYesSide = (side: Side): boolean => side === Side.BuyYes || side === Side.SellYes;
export const isBuySide = (side: Side): boolean => side === Side.BuyYes || side === Side.BuyNo;
export const sideLabel = (side: Side): SideLabel => SIDE_LABELS[side] as SideLabel;
export const isSide = (n: number): n is Side => Number.isInteger(n) && n >= 0 && n <= 3;

/** Order statuses (spec 2.6; statusCode mapping is decision D-2). */
export const ORDER_STATUSES = ['open', 'filled', 'cancelled', 'expired', 'pending_cancel', 'cancel_failed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const OrderStatusCode = {
  open: 0,
  filled: 1,
  cancelled: 2,
  expired: 3,
  pending_cancel: 4,
  cancel_failed: 5,
} as const satisfies Record<OrderStatus, number>;
export const orderStatusFromCode = (code: number): OrderStatus | undefined => ORDER_STATUSES[code];

/** orderType (decision D-3): 0 limit (rests), 1 immediate-or-cancel, 2 post-only. */
export const OrderType = { Limit: 0, ImmediateOrCancel: 1, PostOnly: 2 } as const;
export type OrderType = (typeof OrderType)[keyof typeof OrderType];

export const BPS_SCALE = 10_000;
export const PROTOCOL_TREASURY_SHARDS = 8;
export const DEFAULT_TICK_SIZE_BPS = 100;
export const DEFAULT_FEE_CONFIG = { feeCapBps: 200, decayRateBps: 600 } as const;
