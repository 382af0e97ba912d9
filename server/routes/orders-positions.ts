import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { currentYesPrice, isYesSide, ORDER_STATUSES, OrderStatusCode, sideLabel, type Side } from '../../core/domain';
import { ApiError } from '../http/errors';
import { base58Address, base58Signature, limit, offset, parse } from '../http/validate';
import { tradesOfTransaction } from '../read/queries';
import { iso, trade } from '../read/serialize';
import type { Guards } from './guards';

type Row = Record<string, unknown>;

function order(r: Row) {
  const sideCode = Number(r.side_code) as Side;
  return {
    id: Number(r.id),
    orderId: String(r.order_id),
    marketAddress: r.market_address as string,
    marketId: String(r.market_id),
    settlementMint: r.settlement_mint as string,
    owner: r.owner as string,
    side: isYesSide(sideCode) ? 'yes' : 'no',
    sideCode,
    sideLabel: sideLabel(sideCode),
    isYes: isYesSide(sideCode),
    priceBps: Number(r.price_bps),
    quantity: String(r.quantity),
    filledQuantity: String(r.filled_quantity),
    status: ORDER_STATUSES[Number(r.status_code)],
    statusCode: Number(r.status_code),
    orderType: Number(r.order_type),
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

function position(r: Row) {
  return {
    id: Number(r.id),
    address: r.address as string,
    marketAddress: r.market_address as string,
    owner: r.owner as string,
    market: { oracleFeed: (r.oracle_feed as string | null) ?? null, state: Number(r.state), outcome: r.outcome === null ? null : Number(r.outcome) },
    yesShares: String(r.yes_shares),
    noShares: String(r.no_shares),
    collateralDeposited: String(r.collateral_deposited),
    totalBought: String(r.total_bought),
    totalSold: String(r.total_sold),
    settled: r.settled as boolean,
    payout: String(r.payout),
    currentYesPrice: currentYesPrice(
      r.best_bid === null ? null : Number(r.best_bid),
      r.best_ask === null ? null : Number(r.best_ask),
      r.last_price === null || r.last_price === undefined ? null : Number(r.last_price),
    ),
  };
}

const txTradesQuery = Joi.object({ tx: base58Signature.required(), limit: limit(100, 500) });
const ordersQuery = Joi.object({ status: Joi.string().valid('open', 'filled', 'cancelled'), limit: limit(50, 100), offset: offset() });
const positionsQuery = Joi.object({ settled: Joi.boolean().truthy('true').falsy('false'), owner: base58Address, limit: limit(50, 100), offset: offset() });

export function ordersPositionsRouter(db: Db, g: Guards): Router {
  const r = Router();
  const sensitive = g.wallet('sensitive');
  const publicRead = g.ip('public_read');

  r.get(
    '/orders',
    // `?tx=` is the public trades lookup; everything else is the caller's own orders.
    (req, res, next) => (typeof req.query.tx === 'string' ? publicRead(req, res, next) : sensitive(req, res, next)),
    async (req, res) => {
      if (req.wallet === undefined) {
        const q = parse(txTradesQuery, req.query, 'query');
        return void res.json({ trades: (await tradesOfTransaction(db, q.tx, q.limit)).map(trade) });
      }
      const q = parse(ordersQuery, req.query, 'query');
      const status = q.status === undefined ? null : OrderStatusCode[q.status as 'open' | 'filled' | 'cancelled'];
      const filter = status === null ? '' : 'AND o.status_code = $4';
      const [rows, count] = await Promise.all([
        db.any<Row>(
          `SELECT o.*, m.market_id, m.settlement_mint FROM orders o JOIN markets m ON m.address = o.market_address
            WHERE o.owner = $1 ${filter} ORDER BY o.id DESC LIMIT $2 OFFSET $3`,
          [req.wallet, q.limit, q.offset, status],
        ),
        db.one<{ n: number }>(`SELECT count(*)::int AS n FROM orders o WHERE o.owner = $1 ${filter.replace('$4', '$2')}`, [req.wallet, status]),
      ]);
      res.json({ data: { orders: rows.map(order), total: count.n, limit: q.limit, offset: q.offset } });
    },
  );

  r.get('/positions', sensitive, async (req, res) => {
    const q = parse(positionsQuery, req.query, 'query');
    // Anti-enumeration (spec 4.6 rule 1): asking for someone else's positions looks like nothing.
    if (q.owner !== undefined && q.owner !== req.wallet) throw new ApiError('NOT_FOUND', 'Positions not found');
    const filter = q.settled === undefined ? '' : 'AND p.settled = $4';
    const [rows, count, balance] = await Promise.all([
      db.any<Row>(
        `SELECT p.*, m.oracle_feed, m.state, m.outcome, m.best_bid, m.best_ask,
                (SELECT t.price_bps FROM trades t WHERE t.market_address = p.market_address ORDER BY t.id DESC LIMIT 1) AS last_price
           FROM positions p JOIN markets m ON m.address = p.market_address
          WHERE p.owner = $1 ${filter} ORDER BY p.id DESC LIMIT $2 OFFSET $3`,
        [req.wallet, q.limit, q.offset, q.settled],
      ),
      db.one<{ n: number }>(`SELECT count(*)::int AS n FROM positions p WHERE p.owner = $1 ${filter.replace('$4', '$2')}`, [req.wallet, q.settled]),
      db.one<{ balance: string }>(`SELECT COALESCE(sum(payout), 0)::text AS balance FROM positions WHERE owner = $1 AND settled`, [req.wallet]),
    ]);
    res.json({ data: { positions: rows.map(position), balance: balance.balance, total: count.n, limit: q.limit, offset: q.offset } });
  });

  return r;
}
