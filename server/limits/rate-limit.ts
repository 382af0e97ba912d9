import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config } from '../../core/config';
import type { Redis } from '../../core/redis/client';
import type { Keys } from '../../core/redis/keys';
import { createLimiter } from '../../core/redis/rate-limit';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { ApiError, sendError } from '../http/errors';

/** Spec part 8 tiers. */
export type Tier = 'public_read' | 'public' | 'authenticated' | 'write' | 'sensitive' | 'compliance';

export function tierSpecs(c: Config['rateLimit']): Record<Tier, { points: number; windowMs: number }> {
  return {
    public_read: { points: c.publicReadMax, windowMs: c.publicReadWindowMs },
    public: { points: c.publicMax, windowMs: c.windowMs },
    authenticated: { points: c.publicMax * 2, windowMs: c.windowMs },
    write: { points: Math.max(1, Math.floor(c.publicMax / 2)), windowMs: c.windowMs },
    sensitive: { points: c.sensitiveMax, windowMs: c.windowMs },
    compliance: { points: c.complianceMax, windowMs: c.windowMs },
  };
}

export interface RateLimits {
  /** Consumes one request of `tier` for `key`; sets the X-RateLimit headers; false after sending the 429. */
  consume(tier: Tier, key: string, res: Response): Promise<boolean>;
  /** Middleware limiting by client IP (public routes). */
  byIp(tier: Tier): (req: Request, res: Response, next: NextFunction) => Promise<void>;
}

export function createRateLimits(opts: {
  config: Config;
  store: { redis: Redis; keys: Keys } | undefined;
  metrics: Metrics;
  logger: Logger;
}): RateLimits {
  const specs = tierSpecs(opts.config.rateLimit);
  const limiters = new Map<Tier, RateLimiterAbstract>();
  for (const [tier, spec] of Object.entries(specs) as [Tier, { points: number; windowMs: number }][]) {
    limiters.set(tier, createLimiter({ tier, ...spec }, opts.store));
  }

  const headers = (res: Response, points: number, r: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  };

  async function consume(tier: Tier, key: string, res: Response): Promise<boolean> {
    const points = specs[tier].points;
    try {
      headers(res, points, await limiters.get(tier)!.consume(key));
      return true;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        // Both Redis and the insurance limiter failed: serve rather than refuse everyone.
        opts.logger.error({ err, tier }, 'rate limiter failed; request allowed');
        return true;
      }
      headers(res, points, err);
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))));
      opts.metrics.rateLimitExceeded.inc({ tier });
      sendError(res, new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
      return false;
    }
  }

  return {
    consume,
    byIp: (tier) => async (req, res, next) => {
      if (await consume(tier, `ip:${req.ip ?? 'unknown'}`, res)) next();
    },
  };
}
