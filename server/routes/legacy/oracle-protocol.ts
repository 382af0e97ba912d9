import Joi from 'joi';
import { buildHealth } from '../../../core/health';
import { indexerHealthInputs } from '../../../core/indexer-state';
import { formatScaled } from '../../../core/oracle/pyth';
import { RELEASE_VERSION } from '../../../core/release';
import { base58Address, NO_PARAMS } from '../../http/validate';
import { liveProgramConfig } from '../../read/queries/config';
import { CANDLE_INTERVALS, candles, latestObservation, type CandleInterval } from '../../read/queries/oracle';
import { periodStats, platformTotals } from '../../read/queries/trades';
import { route, type RouteDef, type RouteDeps } from '../table';
import { LegacyError, sendData } from './envelope';
import { PLAN } from './markets';

const feedParam = Joi.object({ feed: base58Address.required() });
const unixSeconds = Joi.number().integer().min(0).max(100_000_000_000);
/** `/protocol/stats` periods, in seconds. */
export const STATS_PERIODS = { '1h': 3_600, '24h': 86_400, '7d': 604_800, '30d': 2_592_000 } as const;

/** The service's version (package.json's, D-310). */
const VERSION = RELEASE_VERSION;

/** `/oracle/:feed` and its candles (D-150…D-152). */
export function legacyOracleRoutes({ db }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/oracle/:feed',
      access: PLAN,
      params: feedParam,
      query: NO_PARAMS,
      handler: async (_req, res, { params }) => {
        const o = await latestObservation(db, params.feed!);
        if (!o) throw new LegacyError('NOT_FOUND', 'No price of this feed has been indexed');
        sendData(res, {
          feed: o.feed,
          price: o.price.toString(),
          confidence: o.conf.toString(),
          exponent: o.expo,
          publishTime: o.publishTime,
          priceFormatted: formatScaled(o.price, o.expo),
          confidenceFormatted: formatScaled(o.conf, o.expo),
        });
      },
    }),
    route({
      method: 'GET',
      path: '/oracle/:feed/history',
      access: PLAN,
      params: feedParam,
      query: Joi.object({ from: unixSeconds, to: unixSeconds, interval: Joi.string().valid(...Object.keys(CANDLE_INTERVALS)).default('1m') }),
      handler: async (_req, res, { params, query }) => {
        const interval = query.interval as CandleInterval;
        const to = query.to ?? Math.floor(Date.now() / 1000);
        const from = query.from ?? to - CANDLE_INTERVALS[interval] * 100;
        if (from > to) throw new LegacyError('VALIDATION_ERROR', 'from must not be after to');
        const cs = await candles(db, params.feed!, interval, from, to);
        sendData(res, {
          feed: params.feed,
          candles: cs.map((c) => ({ timestamp: c.timestamp, open: formatScaled(c.open, c.expo), high: formatScaled(c.high, c.expo), low: formatScaled(c.low, c.expo), close: formatScaled(c.close, c.expo) })),
        });
      },
    }),
  ];
}

export function legacyProtocolRoutes({ db, programId, startedAt }: RouteDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/protocol/config',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const [live, totals] = await Promise.all([liveProgramConfig(db), platformTotals(db)]);
        sendData(res, {
          programId,
          // Accounts and settings the program's events never carry (D-157).
          authority: null,
          treasury: null,
          defaultSettlementMint: null,
          // The taker fee is a curve of the price (core/domain/fees.ts): its cap is the most it charges.
          takerFeeBps: live.feeConfig.feeCapBps,
          makerRebateBps: 0,
          crankRewardLamports: null,
          tickSizeBps: live.tickSizeBps,
          marketsCreated: totals.markets,
          totalVolume: totals.volume ?? '0',
        });
      },
    }),
    route({
      method: 'GET',
      path: '/protocol/stats',
      access: PLAN,
      query: Joi.object({ period: Joi.string().valid(...Object.keys(STATS_PERIODS)).default('24h') }),
      handler: async (_req, res, { query }) => {
        const period = query.period as keyof typeof STATS_PERIODS;
        const s = await periodStats(db, Math.floor(Date.now() / 1000) - STATS_PERIODS[period]);
        sendData(res, {
          period,
          marketsCreated: s.created,
          marketsResolved: s.resolved,
          totalVolume: s.volume,
          totalTrades: s.trades,
          uniqueTraders: s.traders,
          avgMarketVolume: s.created ? (BigInt(s.volume) / BigInt(s.created)).toString() : '0',
          upOutcomes: s.up,
          downOutcomes: s.down,
        });
      },
    }),
    route({
      method: 'GET',
      path: '/health',
      access: PLAN,
      query: NO_PARAMS,
      handler: async (_req, res) => {
        const i = await indexerHealthInputs(db, startedAt);
        const h = buildHealth(i, { indexerCritical: false });
        sendData(res, { status: h.status, version: VERSION, indexerLag: i.slotLag === null ? null : Number(i.slotLag), lastBlockIndexed: i.lastProcessedSlot === null ? null : Number(i.lastProcessedSlot), uptime: Math.floor((Date.now() - startedAt) / 1000) });
      },
    }),
  ];
}
