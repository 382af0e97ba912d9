import { NO_PARAMS } from '../http/validate';
import { tradersOfDay } from '../read/queries/challenges';
import { route, type RouteDef, type RouteDeps } from './table';

/** Today's challenges (UTC day): fixed goals measured on the day's trades (decision D-45). */
export const DAILY_CHALLENGES = [
  { code: 'trades_10', name: 'Make 10 trades today', metric: 'trades', target: 10 },
  { code: 'markets_3', name: 'Trade in 3 different markets today', metric: 'markets', target: 3 },
  { code: 'volume_50m', name: 'Trade 50,000,000 base units today', metric: 'volume', target: 50_000_000 },
] as const;

/** `/challenges/today`: each challenge with how many wallets completed it so far today. */
export function challengesRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/challenges/today',
      access: { by: 'ip', tier: 'public' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const day = new Date().toISOString().slice(0, 10);
        const rows = await tradersOfDay(db, day);
        const metric = (x: (typeof rows)[number], m: 'trades' | 'markets' | 'volume') => Number(x[m]);
        res.json({
          data: {
            date: `${day}T00:00:00.000Z`,
            endsAt: new Date(Date.parse(day) + 86_400_000).toISOString(),
            participants: rows.length,
            challenges: DAILY_CHALLENGES.map((c) => ({ ...c, completedBy: rows.filter((x) => metric(x, c.metric) >= c.target).length })),
          },
        });
      },
    }),
  ];
}
