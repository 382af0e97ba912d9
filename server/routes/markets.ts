import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { MarketState } from '../../core/domain';
import { ApiError } from '../http/errors';
import { base58Address, limit, NO_PARAMS, offset, parse } from '../http/validate';
import { sendCached as send, type HotCache } from '../read/hot-cache';
import { liveProgramConfig } from '../read/queries';
import { marketsPage } from '../read/queries/markets';
import { currentMarket, iso, level, marketListItem } from '../read/serialize';
import type { Guards } from './guards';

type Row = Record<string, unknown>;
const DEPTH = 10;

const marketIdParam = Joi.object({ id: Joi.alternatives().try(Joi.string().pattern(/^\d{1,20}$/, 'epoch id'), base58Address).required() });

/** `:marketId` is a base58 address or a numeric epoch id (decision D-6). */
export async function findMarket(db: Db, marketId: unknown): Promise<Row> {
  const { id } = parse(marketIdParam, { id: marketId }, 'path');
  const row = /^\d+$/.test(id)
    ? await db.oneOrNone<Row>('SELECT * FROM markets WHERE market_id = $1 ORDER BY id LIMIT 1', [id])
    : await db.oneOrNone<Row>('SELECT * FROM markets WHERE address = $1', [id]);
  if (!row) throw new ApiError('NOT_FOUND', 'Market not found');
  return row;
}

async function listPayload(db: Db, q: { state?: number; limit: number; offset: number }) {
  const { rows, total } = await marketsPage(db, q);
  return { status: 200, json: { data: { markets: rows.map(marketListItem), total, limit: q.limit, offset: q.offset } } };
}

async function currentPayload(db: Db) {
  const trading = await db.oneOrNone<Row>('SELECT * FROM markets WHERE state = $1 ORDER BY t_start DESC, id LIMIT 1', [MarketState.Trading]);
  const upcoming = trading
    ? null
    : await db.oneOrNone<Row>('SELECT * FROM markets WHERE state IN ($1, $2) ORDER BY t_start, id LIMIT 1', [MarketState.Pending, MarketState.Created]);
  const row = trading ?? upcoming;
  if (!row) throw new ApiError('NOT_FOUND', 'No current or upcoming market');
  return { status: 200, json: { data: { market: currentMarket(row), status: trading ? 'trading' : 'upcoming' } } };
}

async function detailPayload(db: Db, marketId: unknown) {
  const m = await findMarket(db, marketId);
  const [bids, asks, live] = await Promise.all([
    db.any<Row>('SELECT * FROM orderbook_levels WHERE market_address = $1 AND book_side = 0 ORDER BY price_bps DESC LIMIT $2', [m.address, DEPTH]),
    db.any<Row>('SELECT * FROM orderbook_levels WHERE market_address = $1 AND book_side = 1 ORDER BY price_bps ASC LIMIT $2', [m.address, DEPTH]),
    liveProgramConfig(db),
  ]);
  const orderbook = { bids: bids.map(level), asks: asks.map(level) };
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

export function marketsRouter(db: Db, chainId: string, g: Guards, hot: HotCache): Router {
  const r = Router();
  const read = g.ip('public_read');
  // Built once per router, not per request (it names this deployment's chain).
  const listQuery = Joi.object({
    state: Joi.number().integer().min(0).max(5),
    limit: limit(50, 100),
    offset: offset(1_000_000),
    chain: Joi.string().valid(chainId),
  });

  r.get('/markets', read, async (req, res) => {
    const q = parse(listQuery, req.query, 'query');
    send(res, await hot.get(`list:${q.state ?? ''}:${q.limit}:${q.offset}`, () => listPayload(db, q)));
  });

  r.get('/markets/current', read, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    send(res, await hot.get('current', () => currentPayload(db)));
  });

  r.get('/markets/:marketId', read, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    send(res, await hot.get(`detail:${String(req.params.marketId)}`, () => detailPayload(db, req.params.marketId)));
  });

  r.get('/markets/:marketId/creator-fee-claims', read, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const m = await findMarket(db, req.params.marketId);
    const rows = await db.any<Row>('SELECT * FROM creator_fee_claims WHERE market_address = $1 ORDER BY id DESC', [m.address]);
    res.json({
      data: rows.map((c) => ({
        marketAddress: c.market_address,
        creatorTokenAccount: c.creator_token_account,
        caller: c.caller,
        amount: String(c.amount),
        slot: Number(c.slot),
        signature: c.tx_signature,
        claimedAt: iso(c.claimed_at),
      })),
    });
  });

  return r;
}
