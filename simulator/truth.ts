/**
 * The simulator's own record of what the chain did, kept by its matching engine and
 * accounting, never by the projector: tests compare the projected tables to it row by row.
 * Field names and value formats are those PostgreSQL returns (snake_case, decimal strings).
 */
export interface Truth {
  markets: Record<string, string | number | null>[];
  orders: Record<string, string | number>[];
  levels: Record<string, string | number>[];
  positions: Record<string, string | number | boolean>[];
  trades: Record<string, string | number | null>[];
  referralLocks: Record<string, string>[];
  referrerEarnings: Record<string, string>[];
  userStats: Record<string, string | number>[];
  feeConfigChanges: number;
  tickSizeChanges: number;
  creatorClaims: Record<string, string>[];
  events: number;
  transactions: number;
  failedTransactions: number;
}
