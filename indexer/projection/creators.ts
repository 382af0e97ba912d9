import { MarketState } from '../../core/domain';
import type { CreatorFeesAccrued, CreatorFeesClaimed } from '../../core/events';
import { check, type EventContext } from './context';
import { requireMarket } from './markets';
import type { BatchState } from './state';

export function creatorFeesAccrued(state: BatchState, e: CreatorFeesAccrued, ctx: EventContext): void {
  const m = requireMarket(state, e.market);
  check(m.creator === e.creator, 'creator_mismatch', `market ${e.market} was created by ${m.creator}, not ${e.creator}`);
  m.accumulatedCreatorFees += e.amount;
  m.creatorFeesEarned += e.amount;
  state.platform.creatorFees += e.amount;
  m.updatedAt = ctx.blockTime;
  state.markets.touch(e.market);
  state.creatorAccruals.push({
    id: state.nextId('creator_fee_accruals'),
    marketAddress: e.market,
    creator: e.creator,
    amount: e.amount,
    accruedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}

/** Creator fees are claimable once the market is Resolved or Closed (spec 2.11, 3.1). */
export function creatorFeesClaimed(state: BatchState, e: CreatorFeesClaimed, ctx: EventContext): void {
  const m = requireMarket(state, e.market);
  check(m.creator === e.creator, 'creator_mismatch', `market ${e.market} was created by ${m.creator}, not ${e.creator}`);
  check(m.state === MarketState.Resolved || m.state === MarketState.Closed, 'not_claimable', `market ${e.market} is in state ${m.state}`);
  check(e.amount <= m.accumulatedCreatorFees, 'negative_balance', `claim of ${e.amount} exceeds ${m.accumulatedCreatorFees}`);
  m.accumulatedCreatorFees -= e.amount;
  m.updatedAt = ctx.blockTime;
  state.markets.touch(e.market);
  state.creatorClaims.push({
    id: state.nextId('creator_fee_claims'),
    marketAddress: e.market,
    creator: e.creator,
    creatorTokenAccount: e.creatorTokenAccount,
    caller: e.caller,
    amount: e.amount,
    claimedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}
