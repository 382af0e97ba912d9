import { OrderStatusCode } from '../../core/domain';
import type { ProgramEvent } from '../../core/events';
import type { EventContext } from './context';
import { creatorFeesAccrued, creatorFeesClaimed } from './creators';
import { marketClosed, marketInitialized, marketResolved, marketSettling, tradingStarted } from './markets';
import { orderClosed, orderFilled, orderPlaced } from './orders';
import { feeConfigChanged, tickSizeChanged } from './program-config';
import { referralLocked, referrerClaimed, referrerCredited } from './referrals';
import { positionSettled } from './settle';
import type { BatchState } from './state';

/** One event into the batch state; throws Contradiction (state untouched) when it cannot apply. */
export function applyEvent(state: BatchState, event: ProgramEvent, ctx: EventContext): void {
  switch (event.kind) {
    case 'MarketInitialized':
      return marketInitialized(state, event.data, ctx);
    case 'TradingStarted':
      return tradingStarted(state, event.data, ctx);
    case 'MarketSettling':
      return marketSettling(state, event.data, ctx);
    case 'MarketResolved':
      return marketResolved(state, event.data, ctx);
    case 'MarketClosed':
      return marketClosed(state, event.data, ctx);
    case 'OrderPlaced':
      return orderPlaced(state, event.data, ctx);
    case 'OrderFilled':
      return orderFilled(state, event.data, ctx);
    case 'OrderCancelled':
      return orderClosed(state, event.data, ctx, OrderStatusCode.cancelled);
    case 'OrderExpired':
      return orderClosed(state, event.data, ctx, OrderStatusCode.expired);
    case 'PositionSettled':
      return positionSettled(state, event.data, ctx);
    case 'FeeConfigChanged':
      return feeConfigChanged(state, event.data, ctx);
    case 'TickSizeChanged':
      return tickSizeChanged(state, event.data, ctx);
    case 'ReferralLocked':
      return referralLocked(state, event.data, ctx);
    case 'ReferrerCredited':
      return referrerCredited(state, event.data, ctx);
    case 'ReferrerClaimed':
      return referrerClaimed(state, event.data, ctx);
    case 'CreatorFeesAccrued':
      return creatorFeesAccrued(state, event.data, ctx);
    case 'CreatorFeesClaimed':
      return creatorFeesClaimed(state, event.data, ctx);
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${JSON.stringify(never)}`);
    }
  }
}
