import Joi from 'joi';
import type { Db } from '../../core/db';
import { ApiError } from '../http/errors';
import { base58Address, limit, NO_PARAMS, offset } from '../http/validate';
import { liveProgramConfig } from '../read/queries/config';
import { bookLevels, creatorFeeClaims, currentMarket as currentMarketRow, marketByKey, marketsPage } from '../read/queries/markets';
import type { DbRow } from '../read/queries/rows';
import { creatorFeeClaim, currentMarket, iso, level, marketListItem } from '../read/serialize';
import { route, type RouteDef, type RouteDeps } from './table';

const DEPTH = 10;

/** `:marketId` is a base58 address or a numeric epoch id (decision D-6). */
export const marketIdParam = Joi.object({ marketId: Joi.alternatives().try(Joi.string().pattern(/^\d{1,20}$/, 'epoch id'), base58Address).required() });

export async function findMarket(db: Db, marketId: string): Promise<DbRow> {
  const row = await marketByKey(db, marketId);
  if (!row) throw new ApiError('NOT_FOUND', 'Market not found');
  return row;
}

async function detailPayload(db: Db, marketId: string) {
  const m = await findMarket(db, marketId);
  const [book, live] = await Promise.all([bookLevels(db, m.address as string, DEPTH), liveProgramConfig(db)]);
  const orderbook = { bids: book.bids.map(level), asks: book.asks.map(level) };
  const market = {
    ...marketListItem(m),
    settlementMint: m.settlement_mint as string,
    totalYesShares: String(m.total_yes_shares),
    totalNoShares: String(m.total_no_shares),
    createdAt: iso(m.created_at),
    resolvedAt: iso(m.resolved_at),
    accumulatedCreatorFees: String(m.accumulated_creator_fees),
    ...live,
    orderbook,
  };
  return { status: 200, json: { data: { market, orderbook } } };
}

/** `/markets`: the list, the current market, one market with its book, its creator-fee claims. */
export function marketsRoutes({ db, chainId, hot }: RouteDeps): RouteDef[] {
  const read = { by: 'ip', tier: 'public_read' } as const;
  const loadCurrent = async () => {
    const found = await currentMarketRow(db);
    if (!found) throw new ApiError('NOT_FOUND', 'No current or upcoming market');
    return { status: 200, json: { data: { market: currentMarket(found.row), status: found.trading ? 'trading' : 'upcoming' } } };
  };
  return [
    route({
      method: 'GET',
      path: '/markets',
      conditional: true,
      access: read,
      // Built once per app, not per request: it names this deployment's chain.
      query: Joi.object({ state: Joi.number().integer().min(0).max(5), limit: limit(50, 100), offset: offset(1_000_000), chain: Joi.string().valid(chainId).meta({ setting: 'CHAIN_ID' }) }),
      handler: (_req, res, { query: q }) =>
        hot.send(res, `list:${q.state ?? ''}:${q.limit}:${q.offset}`, async () => {
          const page = await marketsPage(db, q);
          return { status: 200, json: { data: { markets: page.rows.map(marketListItem), total: page.total, limit: q.limit, offset: q.offset } } };
        }),
    }),
    route({
      method: 'GET',
      path: '/markets/current',
      conditional: true,
      errors: ['NOT_FOUND'],
      access: read,
      query: NO_PARAMS,
      handler: (_req, res) => hot.send(res, 'current', loadCurrent),
    }),
    route({
      method: 'GET',
      path: '/markets/:marketId',
      conditional: true,
      errors: ['NOT_FOUND'],
      access: read,
      params: marketIdParam,
      query: NO_PARAMS,
      handler: (_req, res, { params }) => hot.send(res, `detail:${params.marketId}`, () => detailPayload(db, params.marketId)),
    }),
    route({
      method: 'GET',
      path: '/markets/:marketId/creator-fee-claims',
      errors: ['NOT_FOUND'],
      access: read,
      params: marketIdParam,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        const m = await findMarket(db, params.marketId);
        res.json({ data: (await creatorFeeClaims(db, m.address as string)).map(creatorFeeClaim) });
      },
    }),
  ];
}
