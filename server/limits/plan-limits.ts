import type { NextFunction, Request, Response } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { isWellFormedApiKey, type ApiKeyStore } from '../../core/api-keys';
import { API_PLANS, KEYLESS_PLAN, PLAN_WINDOW_MS, planOf, type PlanName } from '../../core/plans';
import type { Bus } from '../../core/redis/bus';
import type { Redis } from '../../core/redis/client';
import type { Keys } from '../../core/redis/keys';
import { createLimiter } from '../../core/redis/rate-limit';
import type { Logger } from '../../core/telemetry/logger';
import type { Metrics } from '../../core/telemetry/metrics';
import { ApiError } from '../http/errors';
import { LegacyError } from '../routes/legacy/envelope';
import { createLru } from './lru';

export const API_KEY_HEADER = 'x-api-key';

/** Values of the `limit` label of service_plan_limit_refusals_total (D-161). */
export const PLAN_LIMIT_KINDS = ['requests', 'ws_connections'] as const;
export type PlanLimitKind = (typeof PLAN_LIMIT_KINDS)[number];

/** How long a key's verdict is trusted (D-154): the longest a revocation takes on a replica that missed its announcement. */
export const KEY_CACHE_MS = 5_000;
/** Keys each cache holds (D-189): good keys and bad keys apart, so bad ones cannot push good ones out. */
export const KEY_CACHE_ENTRIES = 10_000;
/** The bus channel on which a replica announces a key it revoked (its id), so the others act at once (D-190). */
export const KEY_REVOKED_CHANNEL = 'apikeys:revoked';

/** Who a request counts against: its key's plan, or the keyless plan by client IP. */
export interface PlanCaller {
  plan: PlanName;
  /** `key:<key id>` or `ip:<address>`: the limiter key (and the `/ws` lease owner). */
  subject: string;
  /** The key's id, for a caller with a key. */
  keyId?: string;
}

declare module 'express-serve-static-core' {
  interface Request {
    planCaller?: PlanCaller;
  }
}

/**
 * What a key (or no key) admits: the caller; or a bad key (401, after spending one request of the
 * IP's keyless budget); or a refusal by that budget, spent before anything was looked up (429).
 * `keyless` is the keyless budget's state when a request of it was spent (for the rate-limit headers).
 */
export type Admission =
  | { kind: 'caller'; caller: PlanCaller; keyless?: RateLimiterRes }
  | { kind: 'invalid_key'; keyless?: RateLimiterRes }
  | { kind: 'rate_limited'; keyless: RateLimiterRes };

export interface PlanLimits {
  /**
   * Middleware: admits the caller (429 once the IP's keyless budget is spent by keys this process
   * does not know as good, 401 for a key that is not an active key of this tenant), consumes one
   * request of its plan, cluster-wide, and sets X-RateLimit-Limit and X-RateLimit-Remaining (and
   * -Reset); over the plan, a RATE_LIMITED error. Errors go to `next`, so the presentation shapes them.
   */
  middleware(): (req: Request, res: Response, next: NextFunction) => Promise<void>;
  /** The caller of a request or an upgrade; a key not known as good spends one request of the IP's keyless budget first (D-188). */
  admit(apiKey: string | undefined, ip: string | undefined): Promise<Admission>;
  /** Counts a refusal by a plan limit (the middleware counts its own; `/ws` counts its upgrades). */
  refused(plan: PlanName, limit: PlanLimitKind): void;
  /**
   * Calls `onRevoked` once when key `keyId` stops being active: announced on the bus by the
   * replica that revoked it, or found by the check of held keys every KEY_CACHE_MS (a key revoked
   * by `npm run keys`, or an announcement lost with Redis). Returns the way to stop watching.
   */
  watch(keyId: string, onRevoked: () => void): () => void;
  /** A key this process revoked: forgotten here and announced to every replica (D-190). */
  revoked(keyId: string): Promise<void>;
  close(): Promise<void>;
}

type Known = { keyId: string; plan: PlanName; until: number };

/**
 * Plan limits of the appendix variant (D-154), on the same limiter as the spec 8 tiers
 * (rate-limiter-flexible on Redis with an in-memory insurance limiter, keys under
 * `t:{tenant}:rl:plan_<name>`). Key verdicts are cached (D-189): good keys for `cacheMs` in one
 * LRU, bad keys as briefly in another, so neither a flood of one bad key nor of many distinct
 * ones reaches the database more than the IP's keyless budget allows, nor pushes good keys out.
 */
export function createPlanLimits(opts: {
  tenant: string;
  keys: ApiKeyStore;
  store: { redis: Redis; keys: Keys } | undefined;
  /** Where revocations are announced between replicas; without it, each finds them by its periodic check. */
  bus?: Bus;
  logger: Logger;
  metrics: Metrics;
  cacheMs?: number;
  cacheEntries?: number;
}): PlanLimits {
  const cacheMs = opts.cacheMs ?? KEY_CACHE_MS;
  const entries = opts.cacheEntries ?? KEY_CACHE_ENTRIES;
  const refused = (plan: PlanName, limit: PlanLimitKind) => opts.metrics.planLimitRefusals.inc({ plan, limit });
  // Every series exists from the start, so a rate over it sees the first refusal.
  for (const p of API_PLANS) for (const limit of PLAN_LIMIT_KINDS) opts.metrics.planLimitRefusals.inc({ plan: p.name, limit }, 0);
  const limiters = new Map<PlanName, RateLimiterAbstract>(
    API_PLANS.map((p) => [p.name, createLimiter({ tier: `plan_${p.name}`, points: p.requestsPerMinute, windowMs: PLAN_WINDOW_MS }, opts.store)]),
  );
  // Good keys stay after their time (a later request re-checks them without spending the
  // keyless budget: they were good a moment ago, not guesses); bad keys only for their time.
  const good = createLru<Known>(entries);
  const bad = createLru<number>(entries);
  const inFlight = new Map<string, Promise<{ keyId: string; plan: PlanName } | null>>();

  /** One lookup per key at a time, its verdict cached. */
  function lookup(key: string) {
    let p = inFlight.get(key);
    if (!p) {
      p = opts.keys.lookup(opts.tenant, key).then((value) => {
        if (cacheMs > 0) {
          if (value) {
            good.set(key, { ...value, until: Date.now() + cacheMs });
            bad.delete(key);
          } else {
            good.delete(key);
            bad.set(key, Date.now() + cacheMs);
          }
        }
        return value;
      });
      inFlight.set(key, p);
      void p.then(
        () => inFlight.delete(key),
        () => inFlight.delete(key),
      );
    }
    return p;
  }

  /** One request of the plan for `subject`: the limiter's answer, undefined when no limiter could answer. */
  async function take(plan: PlanName, subject: string): Promise<{ ok: boolean; r: RateLimiterRes } | undefined> {
    try {
      return { ok: true, r: await limiters.get(plan)!.consume(subject) };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { ok: false, r: err };
      // Both Redis and the insurance limiter failed: serve rather than refuse everyone.
      opts.logger.error({ err, plan }, 'plan limiter failed; request allowed');
      return undefined;
    }
  }

  const keyless = (ip: string | undefined): PlanCaller => ({ plan: KEYLESS_PLAN, subject: `ip:${ip ?? 'unknown'}` });
  const callerOf = (k: { keyId: string; plan: PlanName }): PlanCaller => ({ plan: k.plan, subject: `key:${k.keyId}`, keyId: k.keyId });

  async function admit(apiKey: string | undefined, ip: string | undefined): Promise<Admission> {
    if (apiKey === undefined) return { kind: 'caller', caller: keyless(ip) };
    const now = Date.now();
    const known = good.get(apiKey);
    if (known && known.until > now) return { kind: 'caller', caller: callerOf(known) };
    if (known) {
      // Good a moment ago: checked again, at no cost to the IP.
      const k = await lookup(apiKey);
      return k ? { kind: 'caller', caller: callerOf(k) } : { kind: 'invalid_key' };
    }
    // Anything else may be a guess: it pays one request of the IP's keyless budget before the
    // database hears of it, and nothing once that budget is spent (D-188).
    const spent = await take(KEYLESS_PLAN, keyless(ip).subject);
    if (spent && !spent.ok) return { kind: 'rate_limited', keyless: spent.r };
    const badUntil = bad.get(apiKey);
    if (!isWellFormedApiKey(apiKey) || (badUntil !== undefined && badUntil > now)) return { kind: 'invalid_key', keyless: spent?.r };
    const k = await lookup(apiKey);
    return k ? { kind: 'caller', caller: callerOf(k), keyless: spent?.r } : { kind: 'invalid_key', keyless: spent?.r };
  }

  const headers = (res: Response, points: number, r: RateLimiterRes) => {
    res.setHeader('X-RateLimit-Limit', String(points));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
    res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  };
  const retryAfter = (res: Response, r: RateLimiterRes) => res.setHeader('Retry-After', String(Math.max(1, Math.ceil(r.msBeforeNext / 1000))));

  // Revocations: the keys held open (by `/ws` connections) and who to tell.
  const watchers = new Map<string, Set<() => void>>();
  let sweep: NodeJS.Timeout | undefined;
  const forget = (keyId: string) => {
    for (const [key, k] of good.entries()) if (k.keyId === keyId) good.delete(key);
    const fire = watchers.get(keyId);
    watchers.delete(keyId);
    fire?.forEach((f) => f());
    if (!watchers.size && sweep) {
      clearInterval(sweep);
      sweep = undefined;
    }
  };
  // The guarantee behind the bus: every cacheMs, the keys held open are checked in one query.
  const check = async () => {
    const held = [...watchers.keys()];
    if (!held.length) return;
    try {
      const active = await opts.keys.active(opts.tenant, held);
      for (const keyId of held) if (!active.has(keyId)) forget(keyId);
    } catch (err) {
      opts.logger.warn({ err }, 'API key check failed; open /ws connections keep their keys until the next one');
    }
  };
  const subscription = opts.bus
    ?.subscribe(KEY_REVOKED_CHANNEL, (keyId) => forget(keyId))
    .catch((err: unknown) => {
      opts.logger.warn({ err }, 'API key revocations are not received from the bus: each replica finds them by its periodic check');
      return undefined;
    });

  return {
    admit,
    refused,
    watch(keyId, onRevoked) {
      let set = watchers.get(keyId);
      if (!set) watchers.set(keyId, (set = new Set()));
      set.add(onRevoked);
      if (!sweep && cacheMs > 0) {
        sweep = setInterval(() => void check(), cacheMs);
        sweep.unref();
      }
      return () => {
        const s = watchers.get(keyId);
        s?.delete(onRevoked);
        if (s && !s.size) watchers.delete(keyId);
      };
    },
    async revoked(keyId) {
      forget(keyId);
      await opts.bus?.publish(KEY_REVOKED_CHANNEL, keyId).catch((err: unknown) => {
        opts.logger.warn({ err, keyId }, 'API key revocation not announced on the bus: other replicas act on it within their periodic check');
      });
    },
    async close() {
      if (sweep) clearInterval(sweep);
      sweep = undefined;
      await (await subscription)?.();
    },
    middleware: () => async (req, res, next) => {
      try {
        const header = req.headers[API_KEY_HEADER];
        const a = await admit(Array.isArray(header) ? header[0] : header, req.ip);
        const free = planOf(KEYLESS_PLAN).requestsPerMinute;
        switch (a.kind) {
          case 'rate_limited':
            headers(res, free, a.keyless);
            retryAfter(res, a.keyless);
            refused(KEYLESS_PLAN, 'requests');
            return next(new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
          case 'invalid_key':
            if (a.keyless) headers(res, free, a.keyless);
            return next(new LegacyError('INVALID_API_KEY', 'Unknown or revoked API key'));
          case 'caller': {
            const c = a.caller;
            req.planCaller = c;
            const t = await take(c.plan, c.subject);
            if (!t) return next();
            headers(res, planOf(c.plan).requestsPerMinute, t.r);
            if (t.ok) return next();
            retryAfter(res, t.r);
            refused(c.plan, 'requests');
            return next(new ApiError('RATE_LIMITED', 'Rate limit exceeded'));
          }
          default: {
            const never: never = a;
            throw new Error(`unhandled admission ${JSON.stringify(never)}`);
          }
        }
      } catch (err) {
        next(err);
      }
    },
  };
}
