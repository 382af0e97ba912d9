import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../core/config';
import { tierSpecs, type Tier } from '../../core/limits';
import type { Redis } from '../../core/redis/client';
import type { Keys } from '../../core/redis/keys';
import { coalescedConsume, createLimiter, windowSeconds } from '../../core/redis/rate-limit';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { ApiError, sendError } from '../http/errors';

/** Spec part 8 tiers (declared in core/limits.ts, where the dashboards read them too). */
export { RATE_LIMIT_TIERS, tierSpecs, type Tier } from '../../core/limits';

/**
 * Decision D-77: a client IP's pre-authentication budget. Failed wallet authentications (HTTP
 * and WebSocket together) count against it, as many per window as the public tier allows
 * requests (`RATE_LIMIT_MAX_REQUESTS`), apart from the IP's public requests, across every
 * replica. A process that has seen an IP's budget spent refuses that IP's signed requests for
 * the rest of the window before verifying anything, from memory: the check costs a signed
 * request no Redis round trip.
 */
export const AUTH_FAILURE_TIER: Tier = 'public';
export const authFailureKey = (ip: string | undefined) => `authfail:ip:${ip ?? 'unknown'}`;
/** IPs a process remembers as spent (the expired go first, then the oldest). */
const MAX_SPENT_IPS = 100_000;

export interface AuthFailureBudget {
  /**
   * Whether this process has seen `ip` spend its budget in the current window (no I/O). With
   * `res`, the 429 is sent (limit headers and Retry-After).
   */
  spent(ip: string | undefined, res?: Response): boolean;
  /** Counts one failed authentication of `ip`; false when it was over the budget (with `res`, after sending the 429). */
  record(ip: string | undefined, res?: Response): Promise<boolean>;
}

export interface RateLimits {
  /** Consumes one request of `tier` for `key`; sets the X-RateLimit headers; false after sending the 429. */
  consume(tier: Tier, key: string, res: Response): Promise<boolean>;
  /** Middleware limiting by client IP (public routes). */
  byIp(tier: Tier): (req: Request, res: Response, next: NextFunction) => Promise<void>;
  authFailures: AuthFailureBudget;
}

export function createRateLimits(opts: {
  config: Config;
  store: { redis: Redis; keys: Keys } | undefined;
  metrics: Metrics;
  logger: Logger;
}): RateLimits {
  const specs = tierSpecs(opts.config.rateLimit);
  // One point per request, through Redis coalesced per key and turn (D-171); in memory
  // (no Redis) there is no round trip to share.
  const limiters = new Map<Tier, (key: string) => Promise<RateLimiterRes>>();
  const peaks = new Map<Tier, ReturnType<typeof windowPeak>>();
  const { metrics } = opts;
  for (const [tier, spec] of Object.entries(specs) as [Tier, { points: number; windowMs: number }][]) {
    const limiter = createLimiter({ tier, ...spec }, opts.store);
    limiters.set(tier, opts.store ? coalescedConsume(limiter) : (key) => limiter.consume(key));
    // The configured limits beside the live peak (the limits dashboard); every tier's 429
    // counter exists from the start, so a rule sees its first increase.
    metrics.rateLimitMax.set({ tier }, spec.points);
    metrics.rateLimitWindow.set({ tier }, Math.ceil(spec.windowMs / 1000));
    metrics.rateLimitExceeded.inc({ tier }, 0);
    const peak = windowPeak(spec.windowMs);
    peaks.set(tier, peak);
    metrics.rateLimitPeak.set({ tier }, 0);
  }
  (metrics.rateLimitPeak as unknown as { collect?: () => void }).collect = () => {
    const now = Date.now();
    for (const [tier, peak] of peaks) metrics.rateLimitPeak.set({ tier }, peak.read(now));
  };

  const headers = (res: Response, points: number, r: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  };

  const refuse = (tier: Tier, res: Response, r: Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>) => {
    headers(res, specs[tier].points, r as RateLimiterRes);
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));
    opts.metrics.rateLimitExceeded.inc({ tier });
    sendError(res, new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
  };

  /** One request of `tier` for `key`: the limiter's answer, or undefined when no limiter could answer. */
  // Promise chains rather than async functions: this runs on every request, and each async
  // frame and await costs a promise and a microtask more.
  function take(tier: Tier, key: string): Promise<{ ok: boolean; r: RateLimiterRes } | undefined> {
    return limiters.get(tier)!(key).then(
      (r) => {
        peaks.get(tier)!.see(r.consumedPoints, Date.now());
        return { ok: true, r };
      },
      (err: unknown) => {
        if (err instanceof RateLimiterRes) {
          peaks.get(tier)!.see(err.consumedPoints, Date.now());
          return { ok: false, r: err };
        }
        // Both Redis and the insurance limiter failed: serve rather than refuse everyone.
        opts.logger.error({ err, tier }, 'rate limiter failed; request allowed');
        return undefined;
      },
    );
  }

  function consume(tier: Tier, key: string, res: Response): Promise<boolean> {
    return take(tier, key).then((t) => {
      if (!t) return true;
      if (!t.ok) {
        refuse(tier, res, t.r);
        return false;
      }
      headers(res, specs[tier].points, t.r);
      return true;
    });
  }

  // IP → end of the window in which this process saw its pre-authentication budget spent.
  const spentUntil = new Map<string, number>();
  // IP → failures this process counted in the current window, including those whose Redis
  // count is still on the way (D-105): a concurrent burst spends the budget here at once,
  // before the first answer comes back. A lower bound of the cluster-wide count, so it never
  // refuses earlier than the budget does.
  const localFailures = new Map<string, { count: number; until: number }>();
  const authPoints = specs[AUTH_FAILURE_TIER].points;
  const authWindowMs = windowSeconds(specs[AUTH_FAILURE_TIER].windowMs) * 1000;
  const remember = (ip: string, msBeforeNext: number) => {
    const now = Date.now();
    if (spentUntil.size >= MAX_SPENT_IPS) {
      for (const [k, until] of spentUntil) if (until <= now) spentUntil.delete(k);
      if (spentUntil.size >= MAX_SPENT_IPS) spentUntil.delete(spentUntil.keys().next().value!);
    }
    spentUntil.delete(ip);
    spentUntil.set(ip, now + msBeforeNext);
  };
  const authFailures: AuthFailureBudget = {
    spent(ip, res) {
      const key = ip ?? 'unknown';
      const local = localFailures.get(key);
      if (local && local.until > Date.now() && local.count >= authPoints) remember(key, local.until - Date.now());
      const until = spentUntil.get(key);
      if (until === undefined) return false;
      const msBeforeNext = until - Date.now();
      if (msBeforeNext <= 0) {
        spentUntil.delete(key);
        return false;
      }
      if (res) refuse(AUTH_FAILURE_TIER, res, { remainingPoints: 0, msBeforeNext });
      else opts.metrics.rateLimitExceeded.inc({ tier: AUTH_FAILURE_TIER });
      return true;
    },
    async record(ip, res) {
      const key = ip ?? 'unknown';
      const now = Date.now();
      let local = localFailures.get(key);
      if (!local || local.until <= now) {
        if (localFailures.size >= MAX_SPENT_IPS) for (const [k, l] of localFailures) if (l.until <= now || localFailures.size >= MAX_SPENT_IPS) localFailures.delete(k);
        localFailures.set(key, (local = { count: 0, until: now + authWindowMs }));
      }
      local.count += 1;
      const t = await take(AUTH_FAILURE_TIER, authFailureKey(ip));
      // Redis's window is the one that counts.
      if (t) local.until = Date.now() + t.r.msBeforeNext;
      if (!t) return true;
      // The last failure the budget allows, or one over it: the next ones are refused unverified.
      if (!t.ok || t.r.remainingPoints <= 0) remember(ip ?? 'unknown', t.r.msBeforeNext);
      if (t.ok) {
        if (res) headers(res, specs[AUTH_FAILURE_TIER].points, t.r);
        return true;
      }
      if (res) refuse(AUTH_FAILURE_TIER, res, t.r);
      else opts.metrics.rateLimitExceeded.inc({ tier: AUTH_FAILURE_TIER });
      return false;
    },
  };

  return {
    consume,
    authFailures,
    byIp: (tier) => (req, res, next) =>
      consume(tier, `ip:${req.ip ?? 'unknown'}`, res).then((ok) => {
        if (ok) next();
      }),
  };
}

/**
 * The most requests one key made in its window, among the consumes this process saw in the
 * current or the previous window (so a scrape right after a window turns over still shows the
 * last one). O(1) per request: a comparison, no per-key state.
 */
export function windowPeak(windowMs: number) {
  let start = 0;
  let current = 0;
  let previous = 0;
  const roll = (now: number) => {
    if (now - start < windowMs) return;
    // A window with no request in between leaves nothing to carry over.
    previous = now - start < 2 * windowMs ? current : 0;
    current = 0;
    start = now;
  };
  return {
    see(consumed: number, now: number) {
      roll(now);
      if (consumed > current) current = consumed;
    },
    read(now: number): number {
      roll(now);
      return Math.max(current, previous);
    },
  };
}
