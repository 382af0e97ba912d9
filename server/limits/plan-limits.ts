import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { ApiKeyStore } from '../../core/api-keys';
import { API_PLANS, KEYLESS_PLAN, PLAN_WINDOW_MS, planOf, type PlanName } from '../../core/plans';
import type { Redis } from '../../core/redis/client';
import type { Keys } from '../../core/redis/keys';
import { createLimiter } from '../../core/redis/rate-limit';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { ApiError } from '../http/errors';
import { LegacyError } from '../routes/legacy/envelope';

export const API_KEY_HEADER = 'x-api-key';

/** Values of the `limit` label of service_plan_limit_refusals_total (D-161). */
export const PLAN_LIMIT_KINDS = ['requests', 'ws_connections'] as const;
export type PlanLimitKind = (typeof PLAN_LIMIT_KINDS)[number];

/** Who a request counts against: its key's plan, or the keyless plan by client IP. */
export interface PlanCaller {
  plan: PlanName;
  /** `key:<key id>` or `ip:<address>`: the limiter key (and the `/ws` lease owner). */
  subject: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    planCaller?: PlanCaller;
  }
}

export interface PlanLimits {
  /**
   * Middleware: resolves the caller (401 for a key that is not an active key of this tenant),
   * consumes one request of its plan, cluster-wide, and sets X-RateLimit-Limit and
   * X-RateLimit-Remaining (and -Reset); over the plan, a RATE_LIMITED error. Errors go to
   * `next`, so the presentation shapes them.
   */
  middleware(): (req: Request, res: Response, next: NextFunction) => Promise<void>;
  /** The caller of a request or an upgrade, without consuming anything; null for a bad key. */
  caller(apiKey: string | undefined, ip: string | undefined): Promise<PlanCaller | null>;
  /** Counts a refusal by a plan limit (the middleware counts its own; `/ws` counts its upgrades). */
  refused(plan: PlanName, limit: PlanLimitKind): void;
}

/**
 * Plan limits of the appendix variant (D-154), on the same limiter as the spec 8 tiers
 * (rate-limiter-flexible on Redis with an in-memory insurance limiter, keys under
 * `t:{tenant}:rl:plan_<name>`). Key lookups are cached in process for `cacheMs` (revocation
 * takes at most that long to reach every replica), bad keys included, so a flood of one bad key
 * costs no query per request.
 */
export function createPlanLimits(opts: {
  tenant: string;
  keys: ApiKeyStore;
  store: { redis: Redis; keys: Keys } | undefined;
  logger: Logger;
  metrics: Metrics;
  cacheMs?: number;
}): PlanLimits {
  const cacheMs = opts.cacheMs ?? 5_000;
  const refused = (plan: PlanName, limit: PlanLimitKind) => opts.metrics.planLimitRefusals.inc({ plan, limit });
  // Every series exists from the start, so a rate over it sees the first refusal.
  for (const p of API_PLANS) for (const limit of PLAN_LIMIT_KINDS) opts.metrics.planLimitRefusals.inc({ plan: p.name, limit }, 0);
  const limiters = new Map<PlanName, RateLimiterAbstract>(
    API_PLANS.map((p) => [p.name, createLimiter({ tier: `plan_${p.name}`, points: p.requestsPerMinute, windowMs: PLAN_WINDOW_MS }, opts.store)]),
  );
  const cache = new Map<string, { value: { keyId: string; plan: PlanName } | null; until: number }>();

  async function lookup(key: string) {
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = await opts.keys.lookup(opts.tenant, key);
    if (cacheMs > 0) {
      if (cache.size >= 10_000) cache.clear();
      cache.set(key, { value, until: now + cacheMs });
    }
    return value;
  }

  async function caller(apiKey: string | undefined, ip: string | undefined): Promise<PlanCaller | null> {
    if (apiKey === undefined) return { plan: KEYLESS_PLAN, subject: `ip:${ip ?? 'unknown'}` };
    const k = await lookup(apiKey);
    return k && { plan: k.plan, subject: `key:${k.keyId}` };
  }

  const headers = (res: Response, points: number, r: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  };

  /** One request of the caller's plan: false once over it (headers set either way). */
  async function consume(c: PlanCaller, res: Response): Promise<boolean> {
    const points = planOf(c.plan).requestsPerMinute;
    try {
      headers(res, points, await limiters.get(c.plan)!.consume(c.subject));
      return true;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        // Both Redis and the insurance limiter failed: serve rather than refuse everyone.
        opts.logger.error({ err, plan: c.plan }, 'plan limiter failed; request allowed');
        return true;
      }
      headers(res, points, err);
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))));
      return false;
    }
  }

  return {
    caller,
    refused,
    middleware: () => async (req, res, next) => {
      try {
        const header = req.headers[API_KEY_HEADER];
        const apiKey = Array.isArray(header) ? header[0] : header;
        const c = await caller(apiKey, req.ip);
        if (!c) {
          // A bad key spends its IP's keyless budget first: guessing keys is limited like any caller.
          if (!(await consume({ plan: KEYLESS_PLAN, subject: `ip:${req.ip ?? 'unknown'}` }, res))) {
            refused(KEYLESS_PLAN, 'requests');
            return next(new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
          }
          return next(new LegacyError('INVALID_API_KEY', 'Unknown or revoked API key'));
        }
        req.planCaller = c;
        if (!(await consume(c, res))) {
          refused(c.plan, 'requests');
          return next(new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
        }
        next();
      } catch (err) {
        next(err);
      }
    },
  };
}
