import Joi from 'joi';
import { OrderStatusCode } from '../../core/domain';
import { base58Signature, limit, offset, parse } from '../http/validate';
import { ordersOfOwner } from '../read/queries/orders';
import { tradesOfTransaction } from '../read/queries/trades';
import { order, trade } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

type Status = 'open' | 'filled' | 'cancelled';
const txTradesQuery = Joi.object<{ tx: string; limit: number }>({ tx: base58Signature.required(), limit: limit(100, 500) });
const ordersQuery = Joi.object<{ status?: Status; limit: number; offset: number }>({
  status: Joi.string().valid('open', 'filled', 'cancelled'),
  limit: limit(50, 100),
  offset: offset(),
});

/**
 * `/orders`: with `?tx=` the public lookup of one transaction's trades (spec 4.1's root alias);
 * otherwise the signing wallet's own orders. The access decides which query rules apply.
 */
export function ordersRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/orders',
      access: { by: 'wallet', tier: 'sensitive' },
      alternative: { when: (req) => typeof req.query.tx === 'string', access: { by: 'ip', tier: 'public_read' } },
      query: 'custom',
      // The wallet's own orders first: where both sets name a parameter, its rules are documented.
      documentedQuery: [ordersQuery, txTradesQuery],
      handler: async (req, res) => {
        if (req.wallet === undefined) {
          const q = parse(txTradesQuery, req.query, 'query');
          return void res.json({ trades: (await tradesOfTransaction(db, q.tx, q.limit)).map(trade) });
        }
        const q = parse(ordersQuery, req.query, 'query');
        const page = await ordersOfOwner(db, { owner: req.wallet, statusCode: q.status === undefined ? null : OrderStatusCode[q.status], limit: q.limit, offset: q.offset });
        res.json({ data: { orders: page.rows.map(order), total: page.total, limit: q.limit, offset: q.offset } });
      },
    }),
  ];
}
