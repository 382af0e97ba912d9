import Joi from 'joi';
import { base58Signature, limit } from '../http/validate';
import { recentTrades, tradesOfTransaction } from '../read/queries/trades';
import { trade } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

/** `/trades`: the newest trades, or those of one transaction (unwrapped, spec 4.2). */
export function tradesRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/trades',
      access: { by: 'ip', tier: 'public_read' },
      query: Joi.object<{ tx?: string; limit: number }>({ tx: base58Signature, limit: limit(100, 500) }),
      handler: async (_req, res, { query: q }) => {
        const rows = q.tx ? await tradesOfTransaction(db, q.tx, q.limit) : await recentTrades(db, q.limit);
        res.json({ trades: rows.map(trade) });
      },
    }),
  ];
}
