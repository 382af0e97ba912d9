import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { match } from 'path-to-regexp';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import { buildHealth, isSynced } from '../core/health';
import { ApiError, errorMapper, sendError } from './http/errors';
import { docsRouter } from './http/docs';
import { deprecatedAliases, handlerTimeout, requestId, requestMetrics } from './http/middleware';
import { serverSpans } from '../core/telemetry/http-span';
import { indexerHealthInputs } from './read/status';
import type { NonceStore } from '../core/redis/nonce-store';
import type { Bus } from '../core/redis/bus';
import { createHotCache } from './read/hot-cache';
import type { RateLimits } from './limits/rate-limit';
import { achievementsReferralsCreatorsRouter } from './routes/achievements-referrals-creators';
import { bookTradesFeesRouter } from './routes/book-trades-fees';
import { createGuards } from './routes/guards';
import { marketsRouter } from './routes/markets';
import { ordersPositionsRouter } from './routes/orders-positions';
import { publicStatsRouter } from './routes/public-stats';
import { statsRouter } from './routes/stats';

export const API_PREFIX = '/api/v1';

/** Every method and path the API serves, so a known path with another method is a 405. */
function routeTable(routers: Router[], prefix: string) {
  const table: { method: string; matches: (p: string) => boolean }[] = [];
  for (const router of routers) {
    for (const layer of router.stack as unknown as { route?: { path: string; methods: Record<string, boolean> } }[]) {
      if (!layer.route) continue;
      const m = match(`${prefix}${layer.route.path}`, { decode: decodeURIComponent });
      for (const method of Object.keys(layer.route.methods)) table.push({ method: method.toUpperCase(), matches: (p) => m(p) !== false });
    }
  }
  return table;
}

/**
 * The REST app. Middleware order (design 4): request id → alias rewrite → metrics → timeout →
 * routes → 404/405 → error mapper. Rate limits and wallet auth join in front of the routes.
 */
export function createApp(opts: {
  common: Common;
  db: Db;
  nonceStore: NonceStore;
  limits: RateLimits;
  /** The indexer's live changes: they invalidate the hot-read cache. */
  bus?: Bus;
  hotTtlMs?: number;
  startedAt?: number;
  /** Serve `/docs` (interactive API documentation). */
  docs?: boolean;
}): express.Express {
  const { common, db } = opts;
  const { config, logger, metrics } = common;
  const startedAt = opts.startedAt ?? Date.now();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');

  if (config.otel.endpoint) app.use(serverSpans());
  app.use(requestId());
  app.use(deprecatedAliases());
  app.use(requestMetrics(metrics));
  app.use(handlerTimeout(config.requestTimeoutMs));

  // Operational endpoints: root only, unversioned.
  const ops = express.Router();
  ops.get('/health', async (_req, res) => {
    const body = buildHealth(await indexerHealthInputs(db, startedAt));
    res.status(body.status === 'unhealthy' ? 503 : 200).json(body);
  });
  ops.get('/ready', async (_req, res) => {
    const i = await indexerHealthInputs(db, startedAt);
    // A replica serves (possibly stale) data while the indexer restarts: readiness is the database.
    res.status(i.dbConnected ? 200 : 503).json({ ready: i.dbConnected, dbConnected: i.dbConnected, indexerRunning: i.indexerRunning });
  });
  ops.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const hot = createHotCache({ bus: opts.bus, ttlMs: opts.hotTtlMs });
  app.locals.hotCache = hot;
  const g = createGuards({ limits: opts.limits, nonceStore: opts.nonceStore, publicHosts: config.publicHosts, chainId: config.chainId, logger });
  const api = express.Router();
  api.get('/status', g.ip('public_read'), async (_req, res) => {
    const i = await indexerHealthInputs(db, startedAt);
    const h = buildHealth(i);
    if (i.slotLag !== null) metrics.indexerSlotLag.set(i.slotLag);
    res.json({
      data: {
        status: h.status,
        synced: isSynced(i),
        slotLag: h.slotLag,
        lastProcessedSlot: h.lastProcessedSlot,
        lastActivityAt: h.lastActivityAt,
        indexerRunning: i.indexerRunning,
      },
    });
  });
  const routers = [
    marketsRouter(db, config.chainId, g, hot),
    bookTradesFeesRouter(db, g, hot, { programId: config.programId, chainId: config.chainId }),
    ordersPositionsRouter(db, g),
    statsRouter(db, g),
    achievementsReferralsCreatorsRouter(db, g, hot),
    publicStatsRouter(db, g),
    api,
  ];
  for (const r of routers) app.use(API_PREFIX, r);
  app.use(ops);
  const docs = opts.docs ? [docsRouter()] : [];
  for (const r of docs) app.use(r);

  const known = [...routeTable(routers, API_PREFIX), ...routeTable([ops, ...docs], '')];
  app.use((req: Request, res: Response) => {
    const path = req.path;
    const allowed = [...new Set(known.filter((k) => k.matches(path)).map((k) => k.method))];
    if (allowed.length) {
      res.setHeader('Allow', [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', '));
      return sendError(res, new ApiError('METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${path}`));
    }
    sendError(res, new ApiError('NOT_FOUND', 'Not found'));
  });
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => errorMapper(logger, config.requestTimeoutMs)(err, req, res, next));
  return app;
}
