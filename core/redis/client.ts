import Redis, { type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../config/settings';

export type { Redis };

/**
 * A client for commands. `enableOfflineQueue: false` makes commands fail at once while
 * Redis is unreachable instead of piling up; callers fall back (insurance rate limiter)
 * or report a clean error. A command with no reply within `commandTimeout`
 * (`REDIS_COMMAND_TIMEOUT_MS`) fails too: a Redis that keeps its connections but stops
 * answering would otherwise hold every request that consumes a rate limit, and the indexer's
 * publishes, for as long as it hangs.
 */
export function createRedis(url: string, opts: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    // Reconnect forever with capped backoff: an outage must heal without a restart.
    retryStrategy: (times) => Math.min(times * 200, 5_000),
    lazyConnect: false,
    commandTimeout: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    ...opts,
  });
}

/** Resolves once the client is ready, or rejects after timeoutMs. */
export function redisReady(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
    };
    client.on('ready', onReady);
  });
}

export async function pingRedis(client: Redis): Promise<boolean> {
  if (client.status !== 'ready') return false;
  try {
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  }
}
