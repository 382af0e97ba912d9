import { BPS_SCALE } from '../../core/domain';
import type { FeeConfigChanged, TickSizeChanged } from '../../core/events';
import { check, type EventContext } from './context';
import type { BatchState } from './state';

export function feeConfigChanged(state: BatchState, e: FeeConfigChanged, ctx: EventContext): void {
  // An invalid three-way split is stored (and reported by /v2/fee-config invariants); only
  // values that cannot be basis points at all are refused.
  for (const v of [e.feeCapBps, e.decayRateBps, e.protocolShareBps, e.creatorShareBps, e.referralShareBps]) {
    check(v <= BPS_SCALE, 'invalid_value', `fee config value ${v} above ${BPS_SCALE}`);
  }
  state.feeConfigs.push({
    id: state.nextId('fee_config_history'),
    ...e,
    changedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}

export function tickSizeChanged(state: BatchState, e: TickSizeChanged, ctx: EventContext): void {
  check(e.tickSizeBps >= 1 && e.tickSizeBps <= BPS_SCALE, 'invalid_value', `tick size ${e.tickSizeBps}`);
  state.tickSizes.push({
    id: state.nextId('tick_size_history'),
    tickSizeBps: e.tickSizeBps,
    changedAt: ctx.blockTime,
    slot: ctx.slot,
    txSignature: ctx.signature,
    eventIndex: ctx.eventIndex,
  });
}
