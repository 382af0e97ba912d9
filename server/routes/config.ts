import { NO_PARAMS } from '../http/validate';
import { liveProgramConfig } from '../read/queries/config';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/config`: the program and its live tick size and fee curve (unwrapped, spec 4.2; a public market read, D-57). */
export function configRoutes({ db, programId, chainId }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/config',
      access: { by: 'ip', tier: 'public_read' },
      query: NO_PARAMS,
      handler: async (_req, res) => {
        res.json({ programId, chainId, ...(await liveProgramConfig(db)) });
      },
    }),
  ];
}
