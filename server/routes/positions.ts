import Joi from 'joi';
import { ApiError } from '../http/errors';
import { base58Address, limit, offset } from '../http/validate';
import { positionsOfOwner } from '../read/queries/positions';
import { position } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/positions`: the signing wallet's positions and settled balance. */
export function positionsRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/positions',
      // Anti-enumeration (spec 4.6 rule 1): another wallet's positions are "not found".
      errors: ['NOT_FOUND'],
      access: { by: 'wallet', tier: 'sensitive' },
      query: Joi.object<{ settled?: boolean; owner?: string; limit: number; offset: number }>({
        settled: Joi.boolean().truthy('true').falsy('false'),
        owner: base58Address,
        limit: limit(50, 100),
        offset: offset(),
      }),
      handler: async (req, res, { query: q }) => {
        // Anti-enumeration (spec 4.6 rule 1): asking for someone else's positions looks like nothing.
        if (q.owner !== undefined && q.owner !== req.wallet) throw new ApiError('NOT_FOUND', 'Positions not found');
        const page = await positionsOfOwner(db, { owner: req.wallet!, settled: q.settled, limit: q.limit, offset: q.offset });
        res.json({ data: { positions: page.rows.map(position), balance: page.balance, total: page.total, limit: q.limit, offset: q.offset } });
      },
    }),
  ];
}
