import { Router } from 'express';
import Joi from 'joi';
import type { Db } from '../../core/db';
import { isValidFeeSplit } from '../../core/domain';
import { ApiError } from '../http/errors';
import { base58Address, base58Signature, limit, NO_PARAMS, parse } from '../http/validate';
import { feeConfigRow, trade } from '../read/serialize';
import { liveProgramConfig, tradesOfTransaction } from '../read/queries';
import { sendCached, type HotCache } from '../read/hot-cache';
import type { Guards } from './guards';

type Row = Record<string, unknown>;
const FEE_HISTORY = 25;

// Schemas are built once, not per request.
const topQuery = Joi.object({ market: base58Address });
const tradesQuery = Joi.object({ tx: base58Signature, limit: limit(100, 500) });

export function bookTradesFeesRouter(db: Db, g: Guards, hot: HotCache, program: { programId: string; chainId: string }): Router {
  const read = g.ip('public_read');
  const r = Router();

  // Spec 4.2: unwrapped; spec 8: a public market read (D-57).
  r.get('/config', read, async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    res.json({ programId: program.programId, chainId: program.chainId, ...(await liveProgramConfig(db)) });
  });

  r.get('/orderbook/top', read, async (req, res) => {
    const q = parse(topQuery, req.query, 'query');
    const c = await hot.get(`top:${q.market ?? ''}`, async () => {
      const m = q.market
      ? await db.oneOrNone<Row>('SELECT address, best_bid, best_ask FROM markets WHERE address = $1', [q.market])
      : await db.oneOrNone<Row>('SELECT address, best_bid, best_ask FROM markets ORDER BY market_id DESC, id DESC LIMIT 1');
      if (q.market && !m) throw new ApiError('NOT_FOUND', 'Market not found');
      if (!m) return { status: 200, json: { best_bid: null, best_ask: null } };
      return { status: 200, json: { best_bid: m.best_bid ?? null, best_ask: m.best_ask ?? null, market: m.address } };
    });
    sendCached(res, c);
  });

  r.get('/trades', read, async (req, res) => {
    const q = parse(tradesQuery, req.query, 'query');
    const rows = q.tx
      ? await tradesOfTransaction(db, q.tx, q.limit)
      : await db.any<Row>('SELECT * FROM trades ORDER BY id DESC LIMIT $1', [q.limit]);
    res.json({ trades: rows.map(trade) });
  });

  r.get('/v2/fee-config', g.ip('public'), async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const [history, invalid] = await Promise.all([
      db.any<Row>('SELECT * FROM fee_config_history ORDER BY slot DESC, event_index DESC LIMIT $1', [FEE_HISTORY]),
      db.any<Row>('SELECT protocol_share_bps, creator_share_bps, referral_share_bps FROM fee_config_history'),
    ]);
    const invalidFeeSplitRows = invalid.filter(
      (x) =>
        !isValidFeeSplit({
          protocolShareBps: Number(x.protocol_share_bps),
          creatorShareBps: Number(x.creator_share_bps),
          referralShareBps: Number(x.referral_share_bps),
        }),
    ).length;
    res.json({
      current: history[0] ? feeConfigRow(history[0]) : null,
      history: history.map(feeConfigRow),
      invariants: { feeSplitValid: invalidFeeSplitRows === 0, invalidFeeSplitRows },
    });
  });

  return r;
}
