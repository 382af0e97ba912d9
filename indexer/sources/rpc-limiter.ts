import { setTimeout as delay } from 'node:timers/promises';

/**
 * The `rpc` source's side of a provider's limits (D-241): at most `concurrency` requests in
 * flight, and credits (core/rpc-credits.ts) spent no faster than `requestsPerSecond`, paced
 * evenly so the provider's bucket never sees a burst. A 429 stops every caller until its
 * `Retry-After` has passed and cuts the rate (multiplicative decrease); each second without one
 * raises it again (additive increase) up to the configured rate. Given its plan's limit, the
 * source runs just under it and meets 429s only from a provider's own hiccups; given none, it
 * sends unpaced until a first 429, takes the pace of the second before as the limit, and from
 * there probes upwards (10 % a second once back at it) until the next 429.
 */
export interface RpcLimiterOptions {
  /** Credits per second; 0 or unset: no pacing until a 429 says there is a limit. */
  requestsPerSecond?: number;
  /** Requests in flight at once (a JSON-RPC batch is one). Unset: no cap. */
  concurrency?: number;
  /** For tests: the clock (performance.now) and the jitter's draws (Math.random). */
  now?: () => number;
  random?: () => number;
}

export interface RpcLimiterStats {
  /** 429s taken (each paused every caller until its Retry-After passed). */
  rateLimited: number;
  /** The pace now, credits/s; null while unpaced. */
  rate: number | null;
  /** Time callers spent waiting for a pause to end. */
  pausedMs: number;
  /** The last 429's pause, ms: its Retry-After, or the limiter's own backoff without one. */
  lastPauseMs: number;
}

/** Waits `ms`, or less if `signal` aborts; leaves no listener behind on the caller's long-lived signal. */
const sleep = (ms: number, signal?: AbortSignal) => (ms <= 0 ? Promise.resolve() : delay(ms, undefined, { signal }).catch(() => undefined));

/** Multiplicative decrease on a 429, at most once per second (the 429s of requests already in flight are one signal). */
const DECREASE = 0.8;
/** Additive increase per second without a 429, back towards the ceiling: this share of it (from 0.8 back in 4 s). */
const INCREASE = 0.05;
/** With no configured rate, a second at the ceiling without a 429 raises it this much: probing for more. */
const PROBE = 1.1;
/** How early a paced request may go: jitter a provider's one-second bucket absorbs. */
const TOLERANCE_MS = 5;
/**
 * A 429 without `Retry-After` (hosted providers do not promise one, D-474) pauses for this,
 * doubled for each 429 that comes within 5 s of the pause before ending, up to `MAX_PAUSE_MS`;
 * a random half of it, so that the replicas sharing a plan do not all come back at once.
 */
const BASE_PAUSE_MS = 1_000;
const MAX_PAUSE_MS = 16_000;

export function createRpcLimiter(opts: RpcLimiterOptions = {}) {
  const cap = opts.requestsPerSecond && opts.requestsPerSecond > 0 ? opts.requestsPerSecond : Infinity;
  let rate = cap;
  // Where the pace climbs back to: the configured rate, or (with none) the pace the last 429 met.
  let ceiling = cap;
  // Theoretical arrival time of the next credit (GCRA): a request of c credits moves it c / rate on.
  let tat = 0;
  let pausedUntil = 0;
  // -Infinity: the first 429 cuts the pace even in the process's first second (performance.now() counts from its start).
  let lastChange = -Infinity;
  const stats = { rateLimited: 0, pausedMs: 0, lastPauseMs: 0 };
  const clock = opts.now ?? (() => performance.now());
  const random = opts.random ?? Math.random;
  // 429s without Retry-After in a row, each after the pause the one before set, and when that ended.
  let streak = 0;
  let pauseEnd = -Infinity;
  // Credits sent in the last second while unpaced: the pace a first 429 met.
  const sent: { at: number; credits: number }[] = [];
  let sentSum = 0;

  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const limit = opts.concurrency && opts.concurrency > 0 ? opts.concurrency : Infinity;

  function count(credits: number, now: number) {
    if (rate !== Infinity) return;
    sent.push({ at: now, credits });
    sentSum += credits;
    while (sent.length && sent[0]!.at < now - 1_000) sentSum -= sent.shift()!.credits;
  }

  function raise(now: number) {
    if (rate === Infinity || now - lastChange < 1_000) return;
    if (rate < ceiling) rate = Math.min(ceiling, rate + ceiling * INCREASE);
    else if (cap === Infinity) rate = ceiling = ceiling * PROBE;
    else return;
    lastChange = now;
  }

  async function pace(credits: number, signal?: AbortSignal) {
    for (;;) {
      const now = clock();
      if (now < pausedUntil) {
        stats.pausedMs += pausedUntil - now;
        await sleep(pausedUntil - now, signal);
        if (signal?.aborted) return;
        continue;
      }
      raise(now);
      if (rate === Infinity) break;
      const start = Math.max(now, tat);
      tat = start + (credits / rate) * 1000;
      const wait = start - now - TOLERANCE_MS;
      if (wait <= 0) break;
      await sleep(wait, signal);
      // A 429 that came meanwhile moved the pause on: wait it out too.
      if (signal?.aborted || clock() >= pausedUntil) break;
    }
    count(credits, clock());
  }

  return {
    /** Waits for a slot and the credits; the returned function gives the slot back. */
    async acquire(credits: number, signal?: AbortSignal): Promise<() => void> {
      // A slot given back goes straight to the longest waiter, so none is taken twice.
      if (inFlight >= limit) await new Promise<void>((r) => waiting.push(r));
      else inFlight++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const next = waiting.shift();
        if (next) next();
        else inFlight--;
      };
      try {
        await pace(credits, signal);
      } catch (err) {
        release();
        throw err;
      }
      return release;
    },
    /** The provider answered 429: everyone waits out `retryAfterMs`, and the pace slows. */
    rateLimited(retryAfterMs: number | undefined) {
      const now = clock();
      stats.rateLimited++;
      let pauseMs = retryAfterMs;
      if (pauseMs === undefined) {
        // Those in flight when the pause began come back inside it: one signal, not a streak.
        if (now < pauseEnd) pauseMs = pauseEnd - now;
        else {
          streak = now - pauseEnd < 5_000 ? streak + 1 : 0;
          const base = Math.min(MAX_PAUSE_MS, BASE_PAUSE_MS * 2 ** Math.min(streak, 8));
          pauseMs = base / 2 + random() * (base / 2);
          pauseEnd = now + pauseMs;
        }
      }
      stats.lastPauseMs = pauseMs;
      pausedUntil = Math.max(pausedUntil, now + pauseMs);
      tat = Math.max(tat, pausedUntil);
      if (now - lastChange < 1_000) return;
      // Unpaced so far: the pace that met the limit is what was sent in the last second.
      const pace = rate === Infinity ? Math.max(1, sentSum) : rate;
      if (cap === Infinity) ceiling = pace;
      rate = Math.max(1, pace * DECREASE);
      lastChange = now;
      sent.length = 0;
      sentSum = 0;
    },
    stats: (): RpcLimiterStats => ({ ...stats, rate: rate === Infinity ? null : rate }),
  };
}

export type RpcLimiter = ReturnType<typeof createRpcLimiter>;
