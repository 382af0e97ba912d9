import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
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

/** One caller waiting on a coalesced consume. */
interface Waiter {
  resolve(r: RateLimiterRes): void;
  reject(e: unknown): void;
}

/** How long a batch waits for the previous one's answer before it goes anyway (D-171). */
export const COALESCE_WAIT_MS = 10;

/**
 * `limiter.consume(key)` (one point) for many callers, with the same answers: the consumes of
 * one key that gather while the previous batch is at the store go to it as one consume of
 * their count, and the callers get, in call order, what that many consumes back to back would
 * have given each (the counter is atomic in Redis, so a batch of n is exactly n single
 * increments with nothing in between): consumed points `total - n + 1 … total`, the remaining
 * points from those, the window's end, and a refusal for each beyond the limit (D-171). A flood
 * from one address, or a benchmark's, then costs Redis one script and the API one command per
 * round trip instead of one per request.
 *
 * A group commit, as ioredis's auto-pipelining already is (it keeps one pipeline at the server
 * and queues the rest): the next batch goes as soon as the last one is answered, and when
 * nothing is at the store, once the current turn's I/O callbacks have run (`setImmediate`). A
 * batch waits for the previous one's answer at most `waitMs`: a slow or hung Redis (answers
 * only at REDIS_COMMAND_TIMEOUT_MS) would otherwise add that wait to ioredis's own queue, and a
 * request would wait for two command timeouts instead of at most one more than its own.
 */
export function coalescedConsume(limiter: RateLimiterAbstract, waitMs = COALESCE_WAIT_MS): (key: string) => Promise<RateLimiterRes> {
  let batch = new Map<string, Waiter[]>();
  let scheduled = false;
  // Consumes sent and not yet answered.
  let outstanding = 0;
  // While a batch waits on an answer: the end of its wait.
  let waiting: NodeJS.Timeout | undefined;
  const answer = (waiters: Waiter[], total: RateLimiterRes) => {
    const n = waiters.length;
    for (let i = 0; i < n; i++) {
      const consumed = total.consumedPoints - n + 1 + i;
      const r = new RateLimiterRes(Math.max(limiter.points - consumed, 0), total.msBeforeNext, consumed, consumed === 1);
      if (consumed > limiter.points) waiters[i]!.reject(r);
      else waiters[i]!.resolve(r);
    }
  };
  const answered = () => {
    outstanding -= 1;
    if (outstanding === 0 && batch.size) send();
  };
  const send = () => {
    if (waiting) {
      clearTimeout(waiting);
      waiting = undefined;
    }
    const current = batch;
    batch = new Map();
    outstanding += current.size;
    for (const [key, waiters] of current) {
      limiter.consume(key, waiters.length).then(
        (total) => {
          answer(waiters, total);
          answered();
        },
        (err: unknown) => {
          if (err instanceof RateLimiterRes) answer(waiters, err);
          else for (const w of waiters) w.reject(err);
          answered();
        },
      );
    }
  };
  const waited = () => {
    waiting = undefined;
    if (batch.size) send();
  };
  return (key) =>
    new Promise<RateLimiterRes>((resolve, reject) => {
      const waiters = batch.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.set(key, [{ resolve, reject }]);
      if (outstanding > 0) {
        waiting ??= setTimeout(waited, waitMs);
      } else if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (!batch.size) return;
          if (outstanding === 0) send();
          else waiting ??= setTimeout(waited, waitMs);
        });
      }
    });
}
