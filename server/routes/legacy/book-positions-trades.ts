import Joi from 'joi';
import { base58Address, NO_PARAMS } from '../../http/validate';
import { bookLevels } from '../../read/queries/markets';
import { restingOrdersOfMarket } from '../../read/queries/orders';
import { positionOf, positionsWithOrders, positionSummary } from '../../read/queries/positions';
import { tradesOfMarket, tradesOfWallet } from '../../read/queries/trades';
import { legacyOrder, legacyPosition, legacyTrade, SIDE_LABELS_LEGACY, STATES_OF, type LegacyState } from '../../read/serialize-legacy';
import { route, type RouteDef, type RouteDeps } from '../table';
import { LegacyError, sendData } from './envelope';
import { legacyFindMarket, legacyLimit, PLAN } from './markets';

const owner = Joi.object({ owner: base58Address.required() });
const unixSeconds = Joi.number().integer().min(0).max(100_000_000_000);
const SIDE_CODES = Object.fromEntries(Object.entries(SIDE_LABELS_LEGACY).map(([code, name]) => [name, Number(code)]));

/** `/orderbook/:marketId` (depth, spread) and its resting orders. */
export function legacyOrderbookRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/orderbook/:marketId',
      access: PLAN,
      query: Joi.object({ depth: Joi.number().integer().min(1).max(100).default(10) }),
      handler: async (_req, res, { params, query }) => {
        const m = await legacyFindMarket(db, params.marketId!);
        const book = await bookLevels(db, m.address as string, query.depth);
        const lvl = (l: Record<string, unknown>) => ({ priceBps: Number(l.price_bps), quantity: String(l.quantity), orders: Number(l.orders) });
        const bestBid = (m.best_bid as number | null) ?? null;
        const bestAsk = (m.best_ask as number | null) ?? null;
        sendData(res, {
          marketId: String(m.market_id),
          bestBid,
          bestAsk,
          spread: bestBid !== null && bestAsk !== null ? bestAsk - bestBid : null,
          bids: book.bids.map(lvl),
          asks: book.asks.map(lvl),
          timestamp: Date.now(),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/orderbook/:marketId/orders',
      access: PLAN,
      query: Joi.object({ side: Joi.string().valid('bid', 'ask'), owner: base58Address, limit: legacyLimit(100) }),
      handler: async (_req, res, { params, query }) => {
        const m = await legacyFindMarket(db, params.marketId!);
        const rows = await restingOrdersOfMarket(db, { market: m.address as string, bookSide: query.side === undefined ? undefined : query.side === 'bid' ? 0 : 1, owner: query.owner, limit: query.limit });
        sendData(res, { orders: rows.map(legacyOrder) });
      },
    }),
  ];
}

export function legacyPositionsRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/positions/:owner/summary',
      access: PLAN,
      params: owner,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        const s = await positionSummary(db, params.owner!);
        const payout = BigInt(s.payout);
        const deposited = BigInt(s.deposited);
        sendData(res, {
          owner: params.owner,
          totalPositions: s.total,
          activePositions: s.active,
          settledPositions: s.settled,
          totalPayout: s.payout,
          totalDeposited: s.deposited,
          // Of settled positions: what they paid out less what their shares cost (D-157).
          netProfit: (payout - BigInt(s.settled_cost)).toString(),
          winRate: s.settled ? s.wins / s.settled : 0,
          avgPositionSize: s.total ? (deposited / BigInt(s.total)).toString() : '0',
        });
      },
    }),
    route({
      method: 'GET',
      path: '/positions/:marketId/:owner',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        if (!/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(params.owner!)) throw new LegacyError('VALIDATION_ERROR', 'owner must be a base58 address');
        const m = await legacyFindMarket(db, params.marketId!);
        const p = await positionOf(db, m.address as string, params.owner!);
        if (!p) throw new LegacyError('POSITION_NOT_FOUND', 'Position not found');
        sendData(res, legacyPosition(p));
      },
    }),
    route({
      method: 'GET',
      path: '/positions/:owner',
      access: PLAN,
      params: owner,
      query: Joi.object({ state: Joi.string().valid(...Object.keys(STATES_OF)), settled: Joi.boolean(), limit: legacyLimit(20) }),
      handler: async (_req, res, { params, query }) => {
        const rows = await positionsWithOrders(db, { owner: params.owner!, states: query.state ? STATES_OF[query.state as LegacyState] : undefined, settled: query.settled, limit: query.limit });
        sendData(res, rows.map(legacyPosition));
      },
    }),
  ];
}

export function legacyTradesRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/trades/user/:owner',
      access: PLAN,
      params: owner,
      query: Joi.object({ marketId: Joi.string().max(64), role: Joi.string().valid('taker', 'maker'), limit: legacyLimit(50) }),
      handler: async (_req, res, { params, query }) => {
        const market = query.marketId === undefined ? undefined : ((await legacyFindMarket(db, query.marketId)).address as string);
        sendData(res, (await tradesOfWallet(db, { owner: params.owner!, role: query.role, market, limit: query.limit })).map(legacyTrade));
      },
    }),
    route({
      method: 'GET',
      path: '/trades/:marketId',
      access: PLAN,
      query: Joi.object({ from: unixSeconds, to: unixSeconds, side: Joi.string().valid(...Object.keys(SIDE_CODES)), limit: legacyLimit(50) }),
      handler: async (_req, res, { params, query }) => {
        const m = await legacyFindMarket(db, params.marketId!);
        const takerSides = query.side === undefined ? undefined : [SIDE_CODES[query.side]!];
        sendData(res, (await tradesOfMarket(db, { market: m.address as string, from: query.from, to: query.to, takerSides, limit: query.limit })).map(legacyTrade));
      },
    }),
  ];
}

