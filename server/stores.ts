import type { Common } from '../core/common';
import { createMemoryBus, createRedisBus, type Bus } from '../core/redis/bus';
import type { Redis } from '../core/redis/client';
import { createKeys } from '../core/redis/keys';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../core/redis/nonce-store';
import { createRedisUpdateLog, type UpdateLog } from '../core/redis/updates';
import { MAX_FUTURE_SECONDS, MAX_PAST_SECONDS } from './auth/wallet-auth';
import { createRateLimits, type RateLimits } from './limits/rate-limit';
import { createMemoryLeases, createRedisLeases, type ConnectionLeases } from './ws/ip-leases';

/**
 * Cluster-wide nonce store and rate limits on Redis (decision D-11), or their per-process
 * twins when there is no Redis (single-process mode).
 */
export function createApiStores(common: Common, redis: Redis | undefined): { nonceStore: NonceStore; limits: RateLimits } {
  const { config, metrics, logger } = common;
  const keys = createKeys(config.tenantId);
  return {
    nonceStore: redis
      ? createRedisNonceStore({ redis, keys, ttlSeconds: config.nonceTtlSeconds, maxPastSeconds: MAX_PAST_SECONDS, maxFutureSeconds: MAX_FUTURE_SECONDS })
      : createMemoryNonceStore({ ttlSeconds: config.nonceTtlSeconds }),
    limits: createRateLimits({ config, store: redis ? { redis, keys } : undefined, metrics, logger }),
  };
}

/**
 * What `/ws` shares with the other replicas: the bus carrying the indexer's updates, the
 * update log for `resumeFrom`, and the per-IP connection leases. Without Redis: the given
 * in-process bus (single-process mode shares it with the indexer) and per-process leases.
 */
export interface LiveStores {
  bus: Bus;
  updates: UpdateLog | undefined;
  leases: ConnectionLeases;
  close(): Promise<void>;
}

/** `liveSchema`: the projection schema the API reads (D-410), whose sequences `resumeFrom` replays; `public` when not given. */
export function createLiveStores(common: Common, redis: Redis | undefined, local?: { bus: Bus; updates: UpdateLog }, liveSchema?: () => string): LiveStores {
  const { config, logger } = common;
  const keys = createKeys(config.tenantId);
  const max = config.ws.maxConnectionsPerIp;
  if (!redis) {
    const bus = local?.bus ?? createMemoryBus();
    const leases = createMemoryLeases({ max });
    return { bus, updates: local?.updates, leases, close: async () => leases.close() };
  }
  const bus = createRedisBus({ redis, keys, onError: (err) => logger.warn({ err }, 'bus error') });
  const leases = createRedisLeases({ redis, keys, max, ttlMs: config.ws.ipLeaseMs, logger });
  return {
    bus,
    updates: createRedisUpdateLog({ redis, keys, schema: liveSchema }),
    leases,
    async close() {
      await leases.close();
      await bus.close();
    },
  };
}
