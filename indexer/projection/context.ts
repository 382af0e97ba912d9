/** Where an event sits on chain; every time it produces is the block time (decision D-25). */
export interface EventContext {
  signature: string;
  eventIndex: number;
  slot: number;
  blockTime: Date;
}

export type ContradictionReason =
  | 'unknown_market'
  | 'duplicate_market'
  | 'invalid_transition'
  | 'market_not_trading'
  | 'invalid_value'
  | 'duplicate_order'
  | 'unknown_order'
  | 'order_not_resting'
  | 'order_mismatch'
  | 'overfill'
  | 'fee_split_mismatch'
  | 'position_mismatch'
  | 'negative_balance'
  | 'payout_mismatch'
  | 'creator_mismatch'
  | 'not_claimable';

/**
 * An event that contradicts the indexed state. Handlers check everything before they change
 * anything, so throwing this leaves the batch state as it was; the event becomes a dead letter.
 */
export class Contradiction extends Error {
  override name = 'Contradiction';
  constructor(
    readonly reason: ContradictionReason,
    detail: string,
  ) {
    super(detail);
  }
}

export function check(condition: unknown, reason: ContradictionReason, detail: string): asserts condition {
  if (!condition) throw new Contradiction(reason, detail);
}
