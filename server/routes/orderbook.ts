import Joi from 'joi';
import { ApiError } from '../http/errors';
import { base58Address } from '../http/validate';
import { topOfBook } from '../read/queries/markets';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/orderbook/top`: best bid and ask of one market, or of the newest one (unwrapped, spec 4.2). */
export function orderbookRoutes({ db, hot }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/orderbook/top',
      conditional: true,
      errors: ['NOT_FOUND'],
      access: { by: 'ip', tier: 'public_read' },
      query: Joi.object<{ market?: string }>({ market: base58Address }),
      handler: (_req, res, { query: q }) =>
        hot.send(res, `top:${q.market ?? ''}`, async () => {
          const m = await topOfBook(db, q.market);
          if (q.market && !m) throw new ApiError('NOT_FOUND', 'Market not found');
          if (!m) return { status: 200, json: { best_bid: null, best_ask: null } };
          return { status: 200, json: { best_bid: m.best_bid ?? null, best_ask: m.best_ask ?? null, market: m.address } };
        }),
    }),
  ];
}
