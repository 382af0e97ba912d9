import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../core/config';
import { addressTierSpecs, tierSpecs, type Tier } from '../../core/limits';
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

/**
 * D-187: the client IP's bucket of each tier that wallet-signed requests spend besides their
 * wallet's, so fresh keypairs from one address buy nothing past it.
 */
export interface AddressBuckets {
  /**
   * Whether this process has seen `ip` spend its bucket of `tier` in the current window (no I/O,
   * checked before a signature is verified). With `res`, the 429 is sent.
   */
  spent(tier: Tier, ip: string | undefined, res?: Response): boolean;
}

export interface RateLimits {
  /** Consumes one request of `tier` for `key`; sets the X-RateLimit headers; false after sending the 429. */
  consume(tier: Tier, key: string, res: Response): Promise<boolean>;
  /**
   * A verified signed request (D-43, D-187): one request of `tier` for the wallet and one of the
   * tier's per-address bucket for `ip`, together; the X-RateLimit headers describe whichever has
   * fewer requests left; false after sending the 429 of the one that was spent.
   */
  consumeSigned(tier: Tier, wallet: string, ip: string | undefined, res: Response): Promise<boolean>;
  addresses: AddressBuckets;
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
  const tiers = tierSpecs(opts.config.rateLimit);
  const perAddress = addressTierSpecs(opts.config.rateLimit);
  // Every bucket by its name: the tiers, then each tier's per-address bucket (D-187).
  const specs: Record<string, { points: number; windowMs: number }> = { ...tiers };
  for (const a of Object.values(perAddress)) specs[a.name] = { points: a.points, windowMs: a.windowMs };
  // One point per request, through Redis coalesced per key and turn (D-171); in memory
  // (no Redis) there is no round trip to share.
  const limiters = new Map<string, (key: string) => Promise<RateLimiterRes>>();
  const peaks = new Map<string, ReturnType<typeof windowPeak>>();
  const { metrics } = opts;
  for (const [tier, spec] of Object.entries(specs)) {
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

  const refuse = (tier: string, res: Response, r: Pick<RateLimiterRes, 'remainingPoints' | 'msBeforeNext'>) => {
    headers(res, specs[tier]!.points, r as RateLimiterRes);
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));
    opts.metrics.rateLimitExceeded.inc({ tier });
    sendError(res, new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
  };

  /** One request of `tier` for `key`: the limiter's answer, or undefined when no limiter could answer. */
  // Promise chains rather than async functions: this runs on every request, and each async
  // frame and await costs a promise and a microtask more.
  function take(tier: string, key: string): Promise<{ ok: boolean; r: RateLimiterRes } | undefined> {
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
      headers(res, specs[tier]!.points, t.r);
      return true;
    });
  }

  // IP → end of the window in which this process saw its pre-authentication budget spent.
  const spentUntil = spentList();
  // IP → failures this process counted in the current window, including those whose Redis
  // count is still on the way (D-105): a concurrent burst spends the budget here at once,
  // before the first answer comes back. A lower bound of the cluster-wide count, so it never
  // refuses earlier than the budget does.
  const localFailures = new Map<string, { count: number; until: number }>();
  const authPoints = tiers[AUTH_FAILURE_TIER].points;
  const authWindowMs = windowSeconds(tiers[AUTH_FAILURE_TIER].windowMs) * 1000;
  const remember = (ip: string, msBeforeNext: number) => spentUntil.remember(ip, msBeforeNext);
  const authFailures: AuthFailureBudget = {
    spent(ip, res) {
      const key = ip ?? 'unknown';
      const local = localFailures.get(key);
      if (local && local.until > Date.now() && local.count >= authPoints) remember(key, local.until - Date.now());
      const msBeforeNext = spentUntil.left(key);
      if (msBeforeNext === undefined) return false;
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
        if (res) headers(res, tiers[AUTH_FAILURE_TIER].points, t.r);
        return true;
      }
      if (res) refuse(AUTH_FAILURE_TIER, res, t.r);
      else opts.metrics.rateLimitExceeded.inc({ tier: AUTH_FAILURE_TIER });
      return false;
    },
  };

  // `<tier>_per_ip|<ip>` → end of the window in which this process saw the bucket spent (D-187):
  // once it has, signed requests from the address are refused before their signature is verified.
  const addressSpent = spentList();
  const addresses: AddressBuckets = {
    spent(tier, ip, res) {
      const name = perAddress[tier].name;
      const msBeforeNext = addressSpent.left(`${name}|${ip ?? 'unknown'}`);
      if (msBeforeNext === undefined) return false;
      if (res) refuse(name, res, { remainingPoints: 0, msBeforeNext });
      else opts.metrics.rateLimitExceeded.inc({ tier: name });
      return true;
    },
  };

  function consumeSigned(tier: Tier, wallet: string, ip: string | undefined, res: Response): Promise<boolean> {
    const name = perAddress[tier].name;
    return Promise.all([take(name, `ip:${ip ?? 'unknown'}`), take(tier, `wallet:${wallet}`)]).then(([a, w]) => {
      if (a && (!a.ok || a.r.remainingPoints <= 0)) addressSpent.remember(`${name}|${ip ?? 'unknown'}`, a.r.msBeforeNext);
      if (a && !a.ok) {
        refuse(name, res, a.r);
        return false;
      }
      if (w && !w.ok) {
        refuse(tier, res, w.r);
        return false;
      }
      // The headers of the bucket nearer its end: what the caller can still count on.
      const shown = a && (!w || a.r.remainingPoints < w.r.remainingPoints) ? { points: specs[name]!.points, r: a.r } : w && { points: specs[tier]!.points, r: w.r };
      if (shown) headers(res, shown.points, shown.r);
      return true;
    });
  }

  return {
    consume,
    consumeSigned,
    addresses,
    authFailures,
    byIp: (tier) => (req, res, next) =>
      consume(tier, `ip:${req.ip ?? 'unknown'}`, res).then((ok) => {
        if (ok) next();
      }),
  };
}

/**
 * Keys (an IP, or a bucket and an IP) with the end of the window in which this process saw them
 * spend a budget; at most MAX_SPENT_IPS (the expired go first, then the oldest).
 */
function spentList() {
  const until = new Map<string, number>();
  return {
    remember(key: string, msBeforeNext: number): void {
      const now = Date.now();
      if (until.size >= MAX_SPENT_IPS) {
        for (const [k, u] of until) if (u <= now) until.delete(k);
        if (until.size >= MAX_SPENT_IPS) until.delete(until.keys().next().value!);
      }
      until.delete(key);
      until.set(key, now + msBeforeNext);
    },
    /** Milliseconds left of the spent window, or undefined when the key is not (or no longer) spent. */
    left(key: string): number | undefined {
      const u = until.get(key);
      if (u === undefined) return undefined;
      const ms = u - Date.now();
      if (ms > 0) return ms;
      until.delete(key);
      return undefined;
    },
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
