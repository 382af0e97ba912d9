import Joi from 'joi';
import type { Db } from '../../../core/db';
import { base58Address, NO_PARAMS } from '../../http/validate';
import { currentMarket, marketByKey, marketsAfter, marketTradeStats } from '../../read/queries/markets';
import type { DbRow } from '../../read/queries/rows';
import { legacyCurrentMarket, legacyMarket, STATES_OF, type LegacyState } from '../../read/serialize-legacy';
import { route, type RouteDef, type RouteDeps } from '../table';
import { decodeCursor, LegacyError, page, sendData } from './envelope';

export const PLAN = { by: 'plan' } as const;
const MARKET_ID = /^(\d{1,20}|[1-9A-HJ-NP-Za-km-z]{32,44})$/;

/**
 * `:marketId` as in v1 (an epoch id or an address, D-6), checked in the handler: a bad one is
 * the appendix's INVALID_MARKET_ID, an unknown one MARKET_NOT_FOUND.
 */
export async function legacyFindMarket(db: Db, marketId: string): Promise<DbRow> {
  if (!MARKET_ID.test(marketId)) throw new LegacyError('INVALID_MARKET_ID', 'marketId must be an epoch id or a base58 market address');
  const row = await marketByKey(db, marketId);
  if (!row) throw new LegacyError('MARKET_NOT_FOUND', 'Market not found');
  return row;
}

export const legacyLimit = (dflt: number) => Joi.number().integer().min(1).max(100).default(dflt);
const unixSeconds = Joi.number().integer().min(0).max(100_000_000_000);
const state = Joi.string().valid(...(Object.keys(STATES_OF) as LegacyState[]));

export function legacyMarketsRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/markets/current',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const found = await currentMarket(db);
        if (!found) throw new LegacyError('MARKET_NOT_FOUND', 'No current or upcoming market');
        sendData(res, legacyCurrentMarket(found.row));
      },
    }),
    route({
      method: 'GET',
      path: '/markets',
      access: PLAN,
      query: Joi.object({ state, pythFeed: base58Address, from: unixSeconds, to: unixSeconds, limit: legacyLimit(20), cursor: Joi.string().max(512) }),
      handler: async (_req, res, { query: q }) => {
        const after = decodeCursor(q.cursor, ['int', 'int']) as string[] | undefined;
        const rows = await marketsAfter(db, {
          states: q.state ? STATES_OF[q.state as LegacyState] : undefined,
          feed: q.pythFeed,
          from: q.from,
          to: q.to,
          after: after && { marketId: after[0]!, id: after[1]! },
          limit: q.limit,
        });
        const p = page(rows, q.limit, (m) => [String(m.market_id), String(m.id)]);
        sendData(res, p.items.map(legacyMarket), p.pagination);
      },
    }),
    route({
      method: 'GET',
      path: '/markets/:marketId',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        sendData(res, legacyCurrentMarket(await legacyFindMarket(db, params.marketId!)));
      },
    }),
    route({
      method: 'GET',
      path: '/markets/:marketId/stats',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        const m = await legacyFindMarket(db, params.marketId!);
        const s = await marketTradeStats(db, m.address as string);
        const volume = BigInt(s.volume);
        // The book's history is not kept: the one mid price known is the current one (D-157).
        const mid = m.best_bid !== null && m.best_ask !== null ? (Number(m.best_bid) + Number(m.best_ask)) / 2 : null;
        sendData(res, {
          marketId: String(m.market_id),
          totalTrades: s.trades,
          totalVolume: s.volume,
          uniqueTraders: s.traders,
          avgTradeSize: s.trades ? (volume / BigInt(s.trades)).toString() : '0',
          priceHistory: mid === null ? [] : [{ timestamp: Math.floor(Date.now() / 1000), midPrice: mid }],
        });
      },
    }),
  ];
}
