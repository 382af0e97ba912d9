import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from './client';
import type { Keys } from './keys';

export interface LimiterSpec {
  /** Tier name; part of the Redis key, and the label of service_rate_limit_exceeded_total. */
  tier: string;
  points: number;
  windowMs: number;
}

/** rate-limiter-flexible counts whole seconds; a window is rounded up, never down. */
export const windowSeconds = (windowMs: number) => Math.max(1, Math.ceil(windowMs / 1000));

/**
 * A cluster-wide limiter on Redis with an in-memory insurance limiter: while Redis is
 * unreachable each process limits on its own (same points and window) instead of failing
 * requests or letting everything through. Without Redis (embedded mode), in-memory only.
 */
export function createLimiter(spec: LimiterSpec, store?: { redis: Redis; keys: Keys }): RateLimiterAbstract {
  const duration = windowSeconds(spec.windowMs);
  const memory = new RateLimiterMemory({ points: spec.points, duration, keyPrefix: spec.tier });
  if (!store) return memory;
  return new RateLimiterRedis({
    storeClient: store.redis,
    keyPrefix: store.keys.rateLimitPrefix(spec.tier),
    points: spec.points,
    duration,
    // Go to the insurance limiter at once while disconnected instead of waiting on Redis.
    rejectIfRedisNotReady: true,
    insuranceLimiter: memory,
  });
}
