import { buildHealth } from '../../core/health';
import { indexerHealthInputs, statusBody } from '../../core/indexer-state';
import { NO_PARAMS } from '../http/validate';
import { route, type RouteDef, type RouteDeps } from './table';

/**
 * `/status`: an API replica serves while the indexer restarts, so the indexer is not critical to
 * it (D-67); the database is, since `/status` describes the data, not liveness (D-101).
 */
const STATUS_HEALTH = { indexerCritical: false };

/** `/status`: the indexed data's freshness (spec 4.7). */
export function statusRoutes({ db, startedAt }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/status',
      access: { by: 'ip', tier: 'public_read' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const i = await indexerHealthInputs(db, startedAt);
        const h = buildHealth(i, STATUS_HEALTH);
        res.json({ data: statusBody(i, h) });
      },
    }),
  ];
}
