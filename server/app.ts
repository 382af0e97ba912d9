import express, { type NextFunction, type Request, type Response } from 'express';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import { OPS_ROUTES, opsRouter } from '../core/http/ops';
import { indexerHealthInputs } from '../core/indexer-state';
import type { Bus } from '../core/redis/bus';
import type { NonceStore } from '../core/redis/nonce-store';
import { serverSpans } from '../core/telemetry/http-span';
import { STORES } from '../core/telemetry/metrics';
import type { ChainAccess } from '../core/tx';
import type { SignatureVerifier } from '../core/ed25519';
import { servedRootAliases } from './http/aliases';
import { createCors } from './http/cors';
import { DOCS_ROUTES, docsRouter } from './http/docs';
import { ApiError, clip, errorMapper, sendError, setErrorWriter } from './http/errors';
import { deprecatedAliases, refuseMalformedEncoding, requestId, requestLifecycle, sequence } from './http/middleware';
import { createAdminGate } from './http/admin-gate';
import { createJurisdictionPolicy } from './http/jurisdiction';
import { createProbes } from './http/probes';
import type { PlanLimits } from './limits/plan-limits';
import { hasAttestation } from './read/queries/attestations';
import type { RateLimits } from './limits/rate-limit';
import { createHotCache } from './read/hot-cache';
import { createGuards } from './routes/guards';
import { v1Presentation } from './routes';
import { createAllowedMethods, routeTable, type Presentation } from './routes/table';

export { API_PREFIX } from '../core/constants';

/**
 * The REST app. Middleware order (design 4): request id → alias rewrite → metrics and timeout → CORS (D-521) →
 * malformed percent-encoding (400, D-75) → routes (parameterless ones by exact path, D-172) →
 * 404/405 → error mapper. Rate limits and wallet auth run per route, from the route table, in
 * front of its handler.
 */
export function createApp(opts: {
  common: Common;
  /** The primary: writes, API keys, admin, attestations. */
  db: Db;
  /** Where reads go (D-510): a read router over a replica and the primary; the primary when not given. */
  reads?: Db;
  nonceStore: NonceStore;
  limits: RateLimits;
  /** API-key plan limits, for presentations whose routes are limited by plan (the appendix variant). */
  plans?: PlanLimits;
  /** The shape of the API (the spec's v1 by default): prefix, routes and error envelope. */
  presentation?: Presentation;
  /** The indexer's live changes: they invalidate the hot-read cache. */
  bus?: Bus;
  hotTtlMs?: number;
  startedAt?: number;
  /** Serve `/docs` (interactive API documentation). */
  docs?: boolean;
  /** The Ed25519 check of wallet-signed routes (node:crypto by default); tests count its calls. */
  verifySignature?: SignatureVerifier;
  /** The tenant's chain (recent blockhashes for `/tx/*`); without it they answer 503. */
  chain?: ChainAccess;
  /** Whether the live-schema pointer has been read (D-333): part of `/ready` when given. */
  liveSchemaRead?: () => boolean;
}): express.Express {
  const { common, db } = opts;
  const reads = opts.reads ?? db;
  const { config, logger, metrics } = common;
  const presentation = opts.presentation ?? v1Presentation;
  const startedAt = opts.startedAt ?? Date.now();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  setErrorWriter(app.locals, presentation.errorBody);

  const hot = createHotCache({ bus: opts.bus, ttlMs: opts.hotTtlMs });
  app.locals.hotCache = hot;
  const guards = createGuards({ limits: opts.limits, nonceStore: opts.nonceStore, publicHosts: config.publicHosts, chainId: config.chainId, logger, verify: opts.verifySignature, plans: opts.plans });
  const routes = presentation.routes({ db: reads, primary: db, chainId: config.chainId, programId: config.programId, tenantId: config.tenantId, requestTimeoutMs: config.requestTimeoutMs, hot, metrics, startedAt, chain: opts.chain, apiKeyRevoked: opts.plans?.revoked });
  const policy = createJurisdictionPolicy({ geo: config.geo, trustProxy: config.trustProxy, hasAttestation: (wallet, country) => hasAttestation(db, wallet, country) });
  const admin = createAdminGate({ db, logger, metrics, wallets: config.adminWallets });
  const table = routeTable(presentation.prefix, routes, guards, policy, admin);

  if (config.otel.endpoint) app.use(serverSpans());
  app.use(
    sequence(
      requestId(),
      deprecatedAliases(presentation.prefix, servedRootAliases(routes.map((r) => r.path))),
      requestLifecycle(metrics, config.requestTimeoutMs),
      // Preflights answered here from memory, before any route's work (D-521).
      createCors(config.corsAllowedOrigins),
      // Before any router: matching a path parameter decodes it, and a malformed one threw (D-75).
      refuseMalformedEncoding(opts.limits, logger),
      // A parameterless route's exact path, served without the router's walk (D-172).
      table.exact,
    ),
  );
  table.mount(app);

  // Operational endpoints: root only, unversioned, not rate limited: answered from memory
  // (/health) or a cached check (/ready), so a flood costs no database work (D-101).
  const probes = createProbes({ check: () => indexerHealthInputs(reads, startedAt), cacheMs: config.healthCheckCacheMs, liveSchemaRead: opts.liveSchemaRead });
  app.use(opsRouter({ health: probes.health, ready: probes.ready, registry: metrics.registry }));
  if (opts.docs) app.use(docsRouter({ document: presentation.openapi }));

  const allowed = createAllowedMethods([
    ...routes.map((r) => ({ method: r.method, path: `${presentation.prefix}${r.path}` })),
    ...OPS_ROUTES,
    ...(opts.docs ? DOCS_ROUTES : []),
  ]);
  app.use((req: Request, res: Response) => {
    const methods = allowed(req.path);
    if (methods.length) {
      res.setHeader('Allow', methods.join(', '));
      return sendError(res, new ApiError('METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed on ${clip(req.path)}`));
    }
    sendError(res, new ApiError('NOT_FOUND', 'Not found'));
  });
  for (const store of Object.values(STORES)) metrics.storeErrors.inc({ store }, 0);
  const mapError = errorMapper(logger, config.requestTimeoutMs, () => metrics.storeErrors.inc({ store: STORES.postgres }));
  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => mapError(err, req, res, next));
  return app;
}
