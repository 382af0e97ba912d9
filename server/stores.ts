import type { Common } from '../core/common';
import type { Redis } from '../core/redis/client';
import { createKeys } from '../core/redis/keys';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../core/redis/nonce-store';
import { createRateLimits, type RateLimits } from './limits/rate-limit';

/**
 * Cluster-wide nonce store and rate limits on Redis (decision D-11), or their per-process
 * twins when there is no Redis (single-process mode).
 */
export function createApiStores(common: Common, redis: Redis | undefined): { nonceStore: NonceStore; limits: RateLimits } {
  const { config, metrics, logger } = common;
  const keys = createKeys(config.tenantId);
  return {
    nonceStore: redis
      ? createRedisNonceStore({ redis, keys, ttlSeconds: config.nonceTtlSeconds })
      : createMemoryNonceStore({ ttlSeconds: config.nonceTtlSeconds }),
    limits: createRateLimits({ config, store: redis ? { redis, keys } : undefined, metrics, logger }),
  };
}
