import http from 'node:http';
import type { Config } from '../core/config';
import { applyKeepAlive } from '../core/http/keep-alive';
import { STORES } from '../core/telemetry/metrics';
import { createDatabase } from '../core/db';
import { followLiveSchema } from '../core/db/live-projection';
import { createRpcChain, type ChainAccess } from '../core/tx';
import { createCommon } from '../core/process';
import type { Tracing } from '../core/telemetry/tracing';
import { createRedis, type Redis } from '../core/redis/client';
import { databaseProblem, redisProblem, unreachableLine } from '../core/store-reach';
import { checkRedisRequirements } from '../core/redis/requirements';
import { createApiKeyStore } from '../core/api-keys';
import { createKeys } from '../core/redis/keys';
import { createApp } from './app';
import { createPlanLimits } from './limits/plan-limits';
import { v1Presentation } from './routes';
import { legacyPresentation } from './routes/legacy';
import type { Common } from '../core/common';
import type { Db } from '../core/db';
import { exitWith, requireAllowed, requireSettings } from '../core/process';
import { observeIndexerLag } from './observed-lag';
import { startReadRouter } from './read-replica';
import type { SignatureVerifier } from '../core/ed25519';
import { answerClientErrors } from './http/client-error';
import { createApiStores, createLiveStores, type LiveStores } from './stores';
import { createKnownMarkets, marketsIn } from './ws/known-markets';
import { attachWebSocketServer, DEFAULT_WS_OPTIONS, type WsServer } from './ws/server';

/**
 * Graceful HTTP drain for spec 8: stop accepting, let in-flight requests finish for up to
 * `graceMs`, then cut what is left. Idle keep-alive connections are closed at once so they do
 * not hold the drain. It waits on requests, not on the server's `close` event, because
 * upgraded WebSocket sockets still count as the server's connections until `/ws` closes them.
 */
export function createHttpDrain(server: http.Server) {
  let active = 0;
  let idle: (() => void) | undefined;
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    active += 1;
    res.once('close', () => {
      active -= 1;
      if (active === 0) idle?.();
    });
  });
  return {
    drain(graceMs: number): Promise<void> {
      server.close();
      server.closeIdleConnections();
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          server.closeAllConnections();
          resolve();
        };
        const timer = setTimeout(done, graceMs);
        idle = done;
        if (active === 0) done();
      });
    },
  };
}

/**
 * The API's HTTP server with `/ws`, listening on API_PORT (or PORT, D-78), its shutdown hooks registered on
 * `common.shutdown` (refuse upgrades → drain HTTP → close sockets with 1001). Used by the API
 * process and by single-process mode.
 */
export async function startApiServer(opts: {
  common: Common;
  db: Db;
  /** Where reads go (D-510); `db` when not given. */
  reads?: Db;
  redis: Redis | undefined;
  live: LiveStores;
  /** Whether the hot-read cache is invalidated by `live.bus` (true when the indexer publishes there). */
  busCarriesIndexer: boolean;
  docs?: boolean;
  /** The Ed25519 check of HTTP and `/ws` authentication (node:crypto by default); tests count its calls. */
  verifySignature?: SignatureVerifier;
  /** The tenant's chain for `/tx/*` blockhashes: RPC_URL in production, the simulator in single-process mode. */
  chain?: ChainAccess;
  /** Whether the live-schema pointer has been read (D-333); the API process follows it, single-process mode does not. */
  liveSchemaRead?: () => boolean;
  /** The live projection schema (D-333), whose updates `/ws` delivers (D-410); `public` when not given. */
  liveSchema?: () => string;
}): Promise<{ server: http.Server; port: number; ws: WsServer; projectionSwitched: () => void }> {
  const { common, live } = opts;
  const { config, logger, shutdown } = common;
  const stores = createApiStores(common, opts.redis);
  // A tenant serves one shape (D-155): the appendix variant is limited by API-key plans.
  const legacy = config.apiVariant === 'legacy';
  const plans = legacy
    ? createPlanLimits({
        tenant: config.tenantId,
        keys: createApiKeyStore(opts.db),
        store: opts.redis ? { redis: opts.redis, keys: createKeys(config.tenantId) } : undefined,
        // Revocations announced between replicas (D-190).
        bus: live.bus,
        logger,
        metrics: common.metrics,
      })
    : undefined;
  if (plans) shutdown.add('plans', () => plans.close());
  const presentation = legacy ? legacyPresentation : v1Presentation;
  const app = createApp({
    common,
    db: opts.db,
    reads: opts.reads,
    bus: opts.busCarriesIndexer ? live.bus : undefined,
    docs: opts.docs ?? true,
    verifySignature: opts.verifySignature,
    chain: opts.chain,
    liveSchemaRead: opts.liveSchemaRead,
    presentation,
    plans,
    ...stores,
  });
  const server = applyKeepAlive(http.createServer(app), config.httpKeepAliveTimeoutMs);
  answerClientErrors(server);
  const httpDrain = createHttpDrain(server);
  const ws = attachWebSocketServer({
    common,
    server,
    bus: live.bus,
    updates: live.updates,
    nonceStore: stores.nonceStore,
    authFailures: stores.limits.authFailures,
    verifySignature: opts.verifySignature,
    leases: live.leases,
    knownMarket: createKnownMarkets(marketsIn(opts.reads ?? opts.db)),
    trust: app.get('trust proxy fn'),
    plans,
    errorBody: presentation.errorBody,
    liveSchema: opts.liveSchema,
    options: { ...DEFAULT_WS_OPTIONS, pingIntervalMs: config.ws.pingIntervalMs, maxClients: config.ws.maxClients },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.apiPort, config.apiHost, resolve);
  });
  const port = (server.address() as { port: number }).port;
  logger.info({ port }, 'api listening');
  // Hooks run last-added first: refuse new upgrades, drain HTTP, then close the sockets (spec: 1001).
  shutdown.add('ws', () => ws.close());
  shutdown.add('http', () => httpDrain.drain(config.shutdownGraceMs));
  shutdown.add('ws-refuse', () => ws.refuseNew());
  // A switch of the live schema (D-410): nothing read from the old tables is served again, and
  // every /ws client is told to start over on the new schema's sequences.
  const projectionSwitched = () => {
    app.locals.hotCache.invalidate();
    const closed = ws.projectionSwitched();
    logger.info({ closed }, 'live projection schema switched: hot reads dropped, /ws clients closed with 4010');
  };
  return { server, port, ws, projectionSwitched };
}

export async function runApi(config: Config, tracing: Tracing): Promise<void> {
  const common = createCommon(config, 'api', tracing);
  const { logger, shutdown } = common;
  if (!config.databaseUrl) exitWith('the API process needs DATABASE_URL (postgres://user@host:5432/dbname)');
  if (!config.redisUrl) requireAllowed(config, 'the API process in production needs REDIS_URL (nonces, rate limits and /ws limits would be per process)');
  requireSettings(config, process.env, 'api');
  try {
    // A request that timed out (504) must not leave its query holding a pooled connection: under
    // a slow-query flood the pool would fill with work nobody waits for.
    const database = createDatabase({
      url: config.databaseUrl,
      poolMax: config.databasePoolMax,
      applicationName: 'market-indexer-api',
      statementTimeoutMs: config.requestTimeoutMs,
    });
    shutdown.add('database', () => database.close());
    // Without its database a replica keeps running, not ready (D-101): say which setting
    // points where, before "api listening", rather than only failing requests later.
    const dbProblem = await databaseProblem(config.databaseUrl);
    if (dbProblem) logger.error({ setting: 'DATABASE_URL' }, `${unreachableLine('DATABASE_URL', config.databaseUrl, dbProblem)}; /ready answers 503 until it answers`);
    // Reads go to the schema the live-projection pointer names (D-333): public until a switch.
    // A switch before the server listens has no cache or client to reset.
    let projectionSwitched = () => {};
    const reads = startReadRouter(common, database.db, config.databaseRead);
    if (reads) shutdown.add('read-replica', () => reads.close());
    const liveSchema = followLiveSchema({
      db: database.db,
      // A standby cannot LISTEN: its sessions follow the primary's pointer (D-510).
      alsoPools: reads ? [reads.replica] : [],
      databaseUrl: config.databaseUrl,
      onSwitch: (from, to) => {
        logger.info({ from, to }, 'live projection schema switched: reads now go to the new schema');
        projectionSwitched();
      },
      onError: (err) => {
        common.metrics.storeErrors.inc({ store: STORES.postgres });
        logger.warn({ err }, 'following the live projection schema failed; retried');
      },
    });
    shutdown.add('live-schema', () => liveSchema.close());
    let redis: Redis | undefined;
    if (config.redisUrl) {
      // Every request consumes its rate limit in Redis: auto-pipelining sends the commands of
      // one event-loop turn in one write instead of a write (a system call) per request.
      const r = (redis = createRedis(config.redisUrl, { enableAutoPipelining: true, commandTimeout: config.redisCommandTimeoutMs }));
      r.on('error', (err) => {
        common.metrics.storeErrors.inc({ store: STORES.redis });
        logger.warn({ err: err.message }, 'redis error');
      });
      shutdown.add('redis', () => r.disconnect());
      // Each time it connects (a restarted or failed-over Redis may be configured otherwise).
      r.on('ready', () => {
        void checkRedisRequirements(r).then((c) => {
          if (!c.checked) logger.warn('Redis refused CONFIG GET: its persistence and eviction policy cannot be checked (see docs/security.md)');
          for (const problem of c.problems) logger.error({ problem }, 'Redis does not meet the requirements of docs/security.md');
        });
      });
      // Until Redis answers, limits fall back to per-process counting: start serving after it
      // is ready so a fresh replica does not begin with a private quota.
      const redisDown = await redisProblem(r, 5_000);
      if (redisDown) logger.warn({ setting: 'REDIS_URL' }, `${unreachableLine('REDIS_URL', config.redisUrl, redisDown)}; serving with per-process limits until it answers`);
    } else {
      logger.warn('REDIS_URL is not set: nonces, rate limits and WebSocket limits are per process, and no indexer updates reach /ws');
    }
    const live = createLiveStores(common, redis, undefined, liveSchema.current);
    shutdown.add('live', () => live.close());
    const chain = createRpcChain({ url: config.rpcUrl });
    const api = await startApiServer({ common, db: database.db, reads: reads?.db, redis, live, busCarriesIndexer: redis !== undefined, chain, liveSchemaRead: liveSchema.ready, liveSchema: liveSchema.current });
    const { port } = api;
    projectionSwitched = api.projectionSwitched;
    // The indexer's lag as seen from here: it pages even when the indexer cannot report (D-213).
    // Only against a chain given explicitly (always in production, D-210): the default is a
    // local validator that a development API may well run without.
    if (process.env.RPC_URL) shutdown.add('observed-lag', observeIndexerLag({ db: database.db, chain, metrics: common.metrics, logger }));
    process.send?.({ type: 'listening', port });
  } catch (err) {
    logger.error({ err }, 'api failed to start');
    await shutdown.run('failure');
    process.exit(1);
  }
}
