import type { RowOf } from '../../core/db/table';
import type * as tables from '../../core/db/tables';

/**
 * In-memory rows of the projected tables during one batch, derived from the table descriptors
 * (core/db/tables.ts): amounts bigint, times Date, row ids, slots and counts number (assigned
 * from the cursor's id counters, safe far below 2^53).
 */
export type MarketRow = RowOf<typeof tables.markets>;
export type OrderRow = RowOf<typeof tables.orders>;
export type LevelRow = RowOf<typeof tables.orderbookLevels>;
export type PositionRow = RowOf<typeof tables.positions>;
export type TradeRow = RowOf<typeof tables.trades>;
export type ReferralLockRow = RowOf<typeof tables.referralLocks>;
export type ReferrerEarningsRow = RowOf<typeof tables.referrerEarnings>;
export type TraderActivityRow = RowOf<typeof tables.traderActivity>;
export type UserStatsRow = RowOf<typeof tables.userStats>;
export type UserAchievementRow = RowOf<typeof tables.userAchievements>;
/** Append-only rows, inserted as they are. */
export type FeeConfigRow = RowOf<typeof tables.feeConfigHistory>;
export type TickSizeRow = RowOf<typeof tables.tickSizeHistory>;
export type ReferrerCreditRow = RowOf<typeof tables.referrerCredits>;
export type ReferrerClaimRow = RowOf<typeof tables.referrerClaims>;
export type CreatorAccrualRow = RowOf<typeof tables.creatorFeeAccruals>;
export type CreatorClaimRow = RowOf<typeof tables.creatorFeeClaims>;
export type SettledTradeRow = RowOf<typeof tables.settledTrades>;
/** A batch's P&L change of a wallet and day, added to the stored figure. */
export type DailyPnlDelta = RowOf<typeof tables.dailyPnl>;

export interface AchievementDef {
  id: number;
  code: string;
  metric: string;
  threshold: number;
}

/** Tables whose ids the projector assigns. */
export const ID_TABLES = [
  'markets',
  'orders',
  'trades',
  'positions',
  'fee_config_history',
  'tick_size_history',
  'referrer_credits',
  'referrer_claims',
  'creator_fee_accruals',
  'creator_fee_claims',
  'settled_trades',
] as const;
export type IdTable = (typeof ID_TABLES)[number];
