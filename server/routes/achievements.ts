import { NO_PARAMS } from '../http/validate';
import { achievementsOfWallet, allAchievements } from '../read/queries/achievements';
import { achievement, iso } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

const CATEGORIES = ['trading', 'streak', 'accuracy', 'exploration'] as const;

/** `/achievements`: the catalog, and the signing wallet's progress grouped by category. */
export function achievementsRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/achievements/all',
      access: { by: 'ip', tier: 'public' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        res.json({ data: { achievements: (await allAchievements(db)).map(achievement) } });
      },
    }),
    route({
      method: 'GET',
      path: '/achievements',
      access: { by: 'wallet', tier: 'authenticated' },
      query: NO_PARAMS,
      handler: async (req, res) => {
        const rows = await achievementsOfWallet(db, req.wallet!);
        const achievements = rows.map((x) => ({ ...achievement(x), progress: Number(x.progress), unlockedAt: iso(x.unlocked_at) }));
        const grouped = Object.fromEntries(CATEGORIES.map((c) => [c, achievements.filter((a) => a.category === c)]));
        res.json({ data: { achievements, grouped, stats: { total: achievements.length, unlocked: achievements.filter((a) => a.unlockedAt !== null).length } } });
      },
    }),
  ];
}
