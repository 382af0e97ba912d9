import Joi from 'joi';
import { limit } from '../http/validate';
import { traderLeaderboard, type LeaderboardMetric } from '../read/queries/leaderboard';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/leaderboard`: traders ranked by P&L, volume or trade count. */
export function leaderboardRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/leaderboard',
      access: { by: 'ip', tier: 'public' },
      query: Joi.object<{ metric: LeaderboardMetric; limit: number }>({ metric: Joi.string().valid('pnl', 'volume', 'trades').default('pnl'), limit: limit(25, 100) }),
      handler: async (_req, res, { query: q }) => {
        const rows = await traderLeaderboard(db, q.metric, q.limit);
        res.json({
          data: {
            metric: q.metric,
            limit: q.limit,
            leaderboard: rows.map((x, i) => ({
              rank: i + 1,
              wallet: x.wallet as string,
              totalPnl: x.pnl as string,
              volume: x.volume as string,
              trades: Number(x.trades),
              winRate: Number(x.settled) === 0 ? 0 : Math.round((Number(x.wins) / Number(x.settled)) * 10_000) / 100,
            })),
          },
        });
      },
    }),
  ];
}
