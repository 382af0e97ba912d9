import http from 'node:http';
import type { Config } from '../core/config';
import { createDatabase } from '../core/db';
import { createCommon } from '../core/process';
import type { Tracing } from '../core/telemetry/tracing';
import { createRedis, type Redis } from '../core/redis/client';
import { createApp } from './app';
import { createApiStores, createLiveStores } from './stores';
import { attachWebSocketServer, DEFAULT_WS_OPTIONS } from './ws/server';

/**
 * Stops accepting, lets in-flight requests finish for up to `graceMs`, then cuts what is
 * left; idle keep-alive connections are closed at once so they do not hold the drain.
 */
export function closeGracefully(server: http.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

export async function runApi(config: Config, tracing: Tracing): Promise<void> {
  const common = createCommon(config, 'api', tracing);
  const { logger, shutdown } = common;
  if (!config.databaseUrl) {
    process.stderr.write('the API process needs DATABASE_URL (postgres://user@host:5432/dbname)\n');
    process.exit(1);
  }
  try {
    const database = createDatabase({ url: config.databaseUrl, poolMax: config.databasePoolMax, applicationName: 'market-indexer-api' });
    shutdown.add('database', () => database.close());
    let redis: Redis | undefined;
    if (config.redisUrl) {
      const r = (redis = createRedis(config.redisUrl));
      r.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
      shutdown.add('redis', () => r.disconnect());
    } else {
      logger.warn('REDIS_URL is not set: nonces, rate limits and WebSocket limits are per process, and no indexer updates reach /ws');
    }
    const live = createLiveStores(common, redis);
    shutdown.add('live', () => live.close());
    const stores = createApiStores(common, redis);
    const app = createApp({ common, db: database.db, bus: redis ? live.bus : undefined, ...stores });
    const server = http.createServer(app);
    const ws = attachWebSocketServer({
      common,
      server,
      bus: live.bus,
      updates: live.updates,
      nonceStore: stores.nonceStore,
      leases: live.leases,
      trust: app.get('trust proxy fn'),
      options: { ...DEFAULT_WS_OPTIONS, pingIntervalMs: config.ws.pingIntervalMs, maxClients: config.ws.maxClients },
    });
    await new Promise<void>((resolve) => server.listen(config.apiPort, config.apiHost, resolve));
    const port = (server.address() as { port: number }).port;
    logger.info({ port }, 'api listening');
    process.send?.({ type: 'listening', port });
    // Hooks run last-added first: refuse new upgrades, drain HTTP, then close the sockets (spec: 1001).
    shutdown.add('ws', () => ws.close());
    shutdown.add('http', () => closeGracefully(server, config.shutdownGraceMs));
    shutdown.add('ws-refuse', () => ws.refuseNew());
  } catch (err) {
    logger.error({ err }, 'api failed to start');
    await shutdown.run('failure');
    process.exit(1);
  }
}
