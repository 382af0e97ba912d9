import http from 'node:http';
import type { Config } from '../core/config';
import { createDatabase } from '../core/db';
import { createCommon } from '../core/process';
import type { Tracing } from '../core/telemetry/tracing';
import { createRedisBus, type Bus } from '../core/redis/bus';
import { createRedis, type Redis } from '../core/redis/client';
import { createKeys } from '../core/redis/keys';
import { createApp } from './app';
import { createApiStores } from './stores';

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
    let bus: Bus | undefined;
    if (config.redisUrl) {
      const r = (redis = createRedis(config.redisUrl));
      r.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
      const b = (bus = createRedisBus({ redis: r, keys: createKeys(config.tenantId), onError: (err) => logger.warn({ err }, 'bus error') }));
      shutdown.add('redis', async () => {
        await b.close();
        r.disconnect();
      });
    } else {
      logger.warn('REDIS_URL is not set: nonces and rate limits are per process; hot reads refresh by TTL only');
    }
    const server = http.createServer(createApp({ common, db: database.db, bus, ...createApiStores(common, redis) }));
    await new Promise<void>((resolve) => server.listen(config.apiPort, config.apiHost, resolve));
    const port = (server.address() as { port: number }).port;
    logger.info({ port }, 'api listening');
    process.send?.({ type: 'listening', port });
    shutdown.add('http', () => closeGracefully(server, config.shutdownGraceMs));
  } catch (err) {
    logger.error({ err }, 'api failed to start');
    await shutdown.run('failure');
    process.exit(1);
  }
}
