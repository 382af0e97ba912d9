import { API_PREFIX, OPS_PATHS } from '../core/constants';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { match } from 'path-to-regexp';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import { buildHealth } from '../core/health';
import { createProbes } from './http/probes';
import { ApiError, clip, errorMapper, sendError } from './http/errors';
import { NO_PARAMS, parse } from './http/validate';
import { docsRouter } from './http/docs';
import { deprecatedAliases, handlerTimeout, refuseMalformedEncoding, requestId, requestMetrics } from './http/middleware';
import { serverSpans } from '../core/telemetry/http-span';
import { STORES } from '../core/telemetry/metrics';
import { indexerHealthInputs, statusBody } from '../core/indexer-state';
import type { NonceStore } from '../core/redis/nonce-store';
import type { Bus } from '../core/redis/bus';
import { createHotCache } from './read/hot-cache';
import type { RateLimits } from './limits/rate-limit';
import type { SignatureVerifier } from './auth/verify';
import { achievementsReferralsCreatorsRouter } from './routes/achievements-referrals-creators';
import { bookTradesFeesRouter } from './routes/book-trades-fees';
import { createGuards } from './routes/guards';
import { marketsRouter } from './routes/markets';
import { ordersPositionsRouter } from './routes/orders-positions';
import { publicStatsRouter } from './routes/public-stats';
import { statsRouter } from './routes/stats';

export { API_PREFIX } from '../core/constants';

/**
 * `/status`: an API replica serves while the indexer restarts, so the indexer is not critical to
 * it (D-67); the database is, since `/status` describes the data, not liveness (D-101).
 */
const STATUS_HEALTH = { indexerCritical: false };

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
 * malformed percent-encoding (400, D-75) → routes → 404/405 → error mapper. Rate limits and
 * wallet auth join in front of the routes.
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
  /** The Ed25519 check of wallet-signed routes (node:crypto by default); tests count its calls. */
  verifySignature?: SignatureVerifier;
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
  // Before any router: matching a path parameter decodes it, and a malformed one threw (D-75).
  app.use(refuseMalformedEncoding(opts.limits, logger));

  // Operational endpoints: root only, unversioned.
  const ops = express.Router();
  // Not rate limited: answered from memory (/health) or a cached check (/ready), so a flood
  // costs no database work, and a kubelet must never see a 429 (D-101).
  const probes = createProbes({ check: () => indexerHealthInputs(db, startedAt), cacheMs: config.healthCheckCacheMs });
  ops.get(OPS_PATHS.health, async (_req, res) => {
    const { status, body } = await probes.health();
    res.status(status).json(body);
  });
  ops.get(OPS_PATHS.ready, async (_req, res) => {
    const { status, body } = await probes.ready();
    res.status(status).json(body);
  });
  ops.get(OPS_PATHS.metrics, async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const hot = createHotCache({ bus: opts.bus, ttlMs: opts.hotTtlMs });
  app.locals.hotCache = hot;
  const g = createGuards({ limits: opts.limits, nonceStore: opts.nonceStore, publicHosts: config.publicHosts, chainId: config.chainId, logger, verify: opts.verifySignature });
  const api = express.Router();
  api.get('/status', g.ip('public_read'), async (req, res) => {
    parse(NO_PARAMS, req.query, 'query');
    const i = await indexerHealthInputs(db, startedAt);
    const h = buildHealth(i, STATUS_HEALTH);
    if (i.slotLag !== null) metrics.indexerSlotLag.set(i.slotLag);
    res.json({ data: statusBody(i, h) });
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
      return sendError(res, new ApiError('METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${clip(path)}`));
    }
    sendError(res, new ApiError('NOT_FOUND', 'Not found'));
  });
  for (const store of Object.values(STORES)) metrics.storeErrors.inc({ store }, 0);
  const mapError = errorMapper(logger, config.requestTimeoutMs, () => metrics.storeErrors.inc({ store: STORES.postgres }));
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => mapError(err, req, res, next));
  return app;
}
