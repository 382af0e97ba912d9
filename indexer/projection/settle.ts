import { MarketState, Outcome, settlementPayout, type Outcome as OutcomeT } from '../../core/domain';
import type { PositionSettled } from '../../core/events';
import { updateAchievements } from './achievements';
import { check, type EventContext } from './context';
import { requireMarket } from './markets';
import type { PositionRow } from './rows';
import type { BatchState } from './state';

/** What each side of a settled position paid out; a void market refunds half per share. */
function sidePayouts(outcome: OutcomeT, p: PositionRow, total: bigint): { yes: bigint; no: bigint } {
  switch (outcome) {
    case Outcome.Yes:
      return { yes: p.yesShares, no: 0n };
    case Outcome.No:
      return { yes: 0n, no: p.noShares };
    case Outcome.Void: {
      const yes = p.yesShares / 2n;
      return { yes, no: total - yes };
    }
    default: {
      const never: never = outcome;
      throw new Error(`unknown outcome ${String(never)}`);
    }
  }
}

export function positionSettled(state: BatchState, e: PositionSettled, ctx: EventContext): void {
  const market = requireMarket(state, e.market);
  check(market.state === MarketState.Resolved || market.state === MarketState.Closed, 'invalid_transition', `market ${e.market} is not resolved`);
  const p = state.positions.get(e.position);
  check(p, 'position_mismatch', `position ${e.position} is not indexed`);
  check(p.owner === e.owner && p.marketAddress === e.market, 'position_mismatch', `position ${e.position} is not ${e.owner}'s in ${e.market}`);
  check(!p.settled, 'position_mismatch', `position ${e.position} is already settled`);
  check(p.yesShares === e.yesShares && p.noShares === e.noShares, 'position_mismatch', `settled ${e.yesShares}/${e.noShares}, indexed ${p.yesShares}/${p.noShares}`);
  const outcome = market.outcome as OutcomeT;
  const expected = settlementPayout(outcome, p.yesShares, p.noShares);
  check(e.payout === expected, 'payout_mismatch', `payout ${e.payout}, expected ${expected}`);

  p.settled = true;
  p.payout = e.payout;
  p.settledAt = ctx.blockTime;
  p.updatedAt = ctx.blockTime;
  state.positions.touch(e.position);
  state.touchedPositions.add(e.position);

  const payouts = sidePayouts(outcome, p, e.payout);
  const sides = [
    { side: 'yes' as const, shares: p.yesShares, cost: p.yesCost, payout: payouts.yes },
    { side: 'no' as const, shares: p.noShares, cost: p.noCost, payout: payouts.no },
  ].filter((s) => s.shares > 0n || s.cost !== 0n);
  if (sides.length === 0) return;

  let stats = state.stats.get(e.owner);
  if (!stats) {
    stats = {
      wallet: e.owner,
      totalTrades: 0,
      winningTrades: 0,
      losingTrades: 0,
      totalPnl: 0n,
      totalSize: 0n,
      bestTradePnl: null,
      worstTradePnl: null,
      currentStreak: 0,
      longestStreak: 0,
      updatedAt: ctx.blockTime,
    };
    state.stats.insert(e.owner, stats);
  } else {
    state.stats.touch(e.owner);
  }
  const day = ctx.blockTime.toISOString().slice(0, 10);
  for (const s of sides) {
    const pnl = s.payout - s.cost;
    const isWin = pnl > 0n;
    state.settledTrades.push({
      id: state.nextId('settled_trades'),
      wallet: e.owner,
      marketAddress: e.market,
      marketId: market.marketId,
      side: s.side,
      shares: s.shares,
      cost: s.cost,
      payout: s.payout,
      pnl,
      isWin,
      marketOutcome: outcome,
      settledAt: ctx.blockTime,
      tStart: market.tStart,
      tEnd: market.tEnd,
      slot: ctx.slot,
      txSignature: ctx.signature,
    });
    stats.totalTrades += 1;
    stats.totalPnl += pnl;
    stats.totalSize += s.shares;
    if (isWin) {
      stats.winningTrades += 1;
      stats.currentStreak += 1;
      stats.longestStreak = Math.max(stats.longestStreak, stats.currentStreak);
    } else {
      stats.losingTrades += 1;
      stats.currentStreak = 0;
    }
    if (stats.bestTradePnl === null || pnl > stats.bestTradePnl) stats.bestTradePnl = pnl;
    if (stats.worstTradePnl === null || pnl < stats.worstTradePnl) stats.worstTradePnl = pnl;
    const key = `${e.owner}:${day}`;
    const d = state.dailyPnl.get(key);
    if (d) d.pnl += pnl;
    else state.dailyPnl.set(key, { wallet: e.owner, day, pnl });
  }
  stats.updatedAt = ctx.blockTime;
  updateAchievements(state, e.owner, ctx);
}
