import type { EventContext } from './context';
import type { TraderActivityRow, UserStatsRow } from './rows';
import type { BatchState } from './state';

/** The projector's achievement metrics (the `metric` column of the catalog). */
function metricValue(metric: string, activity: TraderActivityRow | undefined, stats: UserStatsRow | undefined): number {
  switch (metric) {
    case 'trades':
      return activity?.tradesCount ?? 0;
    case 'volume_millions':
      return activity ? Number(activity.volume / 1_000_000n) : 0;
    case 'markets_traded':
      return activity?.marketsTraded ?? 0;
    case 'win_streak':
      return stats?.longestStreak ?? 0;
    case 'wins':
      return stats?.winningTrades ?? 0;
    default:
      // A catalog row with a metric this projector does not know stays at zero progress.
      return 0;
  }
}

/**
 * Progress is the metric capped at the threshold; an achievement unlocks at the block time
 * of the event that first reached its threshold. Rows exist once progress is above zero.
 */
export function updateAchievements(state: BatchState, wallet: string, ctx: EventContext): void {
  // Runs for both sides of every fill: the wallet's rows and keys are looked up once.
  const activity = state.activity.get(wallet);
  const stats = state.stats.get(wallet);
  const keys = state.achievementKeys(wallet);
  for (let i = 0; i < state.achievements.length; i++) {
    const def = state.achievements[i]!;
    const progress = Math.min(metricValue(def.metric, activity, stats), def.threshold);
    const key = keys[i]!;
    const row = state.userAchievements.get(key);
    if (!row) {
      if (progress === 0) continue;
      state.userAchievements.insert(key, {
        wallet,
        achievementId: def.id,
        progress,
        unlockedAt: progress >= def.threshold ? ctx.blockTime : null,
        updatedAt: ctx.blockTime,
      });
      continue;
    }
    if (row.progress === progress) continue;
    row.progress = progress;
    row.updatedAt = ctx.blockTime;
    if (progress >= def.threshold && !row.unlockedAt) row.unlockedAt = ctx.blockTime;
    state.userAchievements.touch(key);
  }
}
