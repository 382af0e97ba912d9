import IORedis, { Cluster, type ClusterOptions, type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../config/settings';
import { parseRedisUrl } from './url';

/** One Redis or a Redis Cluster (D-92): every store works on either through this type. */
export type Redis = IORedis | Cluster;

export const isCluster = (client: Redis): client is Cluster => (client as Cluster).isCluster === true;

const retry = (times: number) => Math.min(times * 200, 5_000);

/**
 * A client for commands. `enableOfflineQueue: false` makes commands fail at once while
 * Redis is unreachable instead of piling up; callers fall back (insurance rate limiter)
 * or report a clean error. A command with no reply within `commandTimeout`
 * (`REDIS_COMMAND_TIMEOUT_MS`) fails too: a Redis that keeps its connections but stops
 * answering would otherwise hold every request that consumes a rate limit, and the indexer's
 * publishes, for as long as it hangs. A `redis+cluster://` URL gives ioredis's Cluster client
 * with the same behaviour per node.
 */
export function createRedis(url: string, opts: RedisOptions & Pick<ClusterOptions, 'enableAutoPipelining'> = {}): Redis {
  const nodeOptions: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    // Reconnect forever with capped backoff: an outage must heal without a restart.
    retryStrategy: retry,
    lazyConnect: false,
    commandTimeout: DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    ...opts,
  };
  const target = parseRedisUrl(url);
  if ('error' in target) throw new Error(`REDIS_URL ${target.error}`);
  if (!target.cluster) return new IORedis(url, nodeOptions);
  const { enableAutoPipelining, lazyConnect, enableOfflineQueue, retryStrategy, ...perNode } = nodeOptions;
  return new Cluster(target.nodes, {
    enableOfflineQueue,
    enableAutoPipelining,
    lazyConnect,
    // The Cluster reconnects as a whole (it rediscovers the slots); its nodes do not retry alone.
    clusterRetryStrategy: retryStrategy === null ? () => null : retry,
    redisOptions: { ...perNode, username: target.username, password: target.password, tls: target.tls ? {} : undefined },
  });
}

/**
 * A second connection for pub/sub (a subscribed connection runs no other command). It queues
 * commands while reconnecting and re-subscribes by itself afterwards; it has no command
 * timeout: a (P)SUBSCRIBE that timed out would still take effect once Redis answers.
 */
export function subscriberOf(client: Redis): Redis {
  if (!isCluster(client)) return client.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
  return client.duplicate(undefined, {
    enableOfflineQueue: true,
    enableAutoPipelining: false,
    redisOptions: { ...client.options.redisOptions, maxRetriesPerRequest: null, commandTimeout: undefined },
  });
}

/**
 * Sends commands in order and fails with the first error. Each call gets the pipeline, or the
 * client itself, typed as `C` (the commands the caller uses, its scripts included). On one
 * Redis they go as one pipeline (one write, one round trip). On a Cluster a pipeline may only
 * touch one node's slots, so each goes on its own (auto-pipelined per node when enabled):
 * commands on the same key still reach their node in this order, over its one connection.
 */
export async function sendInOrder<C>(client: Redis, calls: ((commands: C) => unknown)[]): Promise<void> {
  if (!calls.length) return;
  if (isCluster(client)) {
    await Promise.all(calls.map((call) => call(client as unknown as C)));
    return;
  }
  const p = client.pipeline();
  for (const call of calls) call(p as unknown as C);
  const failed = ((await p.exec()) ?? []).find(([err]) => err);
  if (failed) throw failed[0];
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
