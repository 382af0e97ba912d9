import type http from 'node:http';
import { creditsOf } from '../core/rpc-credits';

/**
 * How the simulated chain's JSON-RPC behaves like a hosted RPC provider rather than a local
 * validator (D-240). Every part is off unless set, so the chain answers as it always did.
 */
export interface RpcProviderOptions {
  /** Added to every answer (429s and errors too), in ms: a provider is a network hop away. */
  latencyMs?: number;
  /** The latency varies by up to this much either way, uniformly. */
  jitterMs?: number;
  /**
   * The rate limit in credits per second (core/rpc-credits.ts: a light call costs 1, so it is
   * requests/s of those), as a token bucket; past it the answer is HTTP 429 (`retryAfter`).
   * 0 or unset: no limit.
   */
  requestsPerSecond?: number;
  /**
   * Whether a 429 carries `Retry-After` (whole seconds). Unset or false: none, as hosted
   * providers answer (their documentation promises a 429, never the header, D-474).
   */
  retryAfter?: boolean;
  /** The bucket holds this many seconds' worth of credits: the burst allowed after idling (default 1). */
  burstSeconds?: number;
  /** JSON-RPC batches (array bodies): answered (default), or refused as providers that disable them do. */
  batches?: boolean;
  /** The fault switch: this share of requests (0–1) gets a 429, a 5xx or no answer at all, a third each. */
  faultRate?: number;
  /** For tests; Math.random by default. */
  random?: () => number;
}

/** What the server does with one HTTP request. */
export type ProviderVerdict =
  | { kind: 'serve'; delayMs: number }
  | { kind: 'refuse'; delayMs: number; status: number; headers: Record<string, string>; body: string }
  | { kind: 'hang' };

export interface ProviderStats {
  /** HTTP requests taken in. */
  requests: number;
  /** JSON-RPC calls in them (a batch counts each). */
  calls: number;
  /** Credits charged for what was served. */
  credits: number;
  /** 429s for going past the limit (not the fault switch's). */
  rateLimited: number;
  batchesRefused: number;
  faults: { rateLimited: number; serverError: number; timeout: number };
  /** `getTransaction` bodies served for a signature whose body had been served before. */
  refetched: number;
  /**
   * The most requests that arrived while a 429's `Retry-After` ran (from the 429 reaching the
   * client to its Retry-After passing). A client that honours it sends nothing new then: only
   * what it had in flight and what it sent before it read the 429 arrive, within twice its
   * concurrency; one that does not sends at its pace.
   */
  maxArrivalsInPause: number;
}

const BATCH_REFUSED = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Batch requests are not available on this plan' } });

export function createRpcProvider(initial: RpcProviderOptions = {}) {
  let opts = { ...initial };
  const random = () => (opts.random ?? Math.random)();
  let tokens = 0;
  let refilledAt = performance.now();
  let bucketFull = true;
  // Only kept while the provider mode is on: a long-running chain would grow it without bound.
  const served = new Set<string>();
  const fresh = (): ProviderStats => ({ requests: 0, calls: 0, credits: 0, rateLimited: 0, batchesRefused: 0, faults: { rateLimited: 0, serverError: 0, timeout: 0 }, refetched: 0, maxArrivalsInPause: 0 });
  const stats = fresh();
  // The Retry-After window open now: a later 429 inside it does not open another.
  let pauseFrom = 0;
  let pauseUntil = 0;
  let pauseArrivals = 0;

  const enabled = () => Boolean(opts.latencyMs || opts.jitterMs || opts.requestsPerSecond || opts.batches === false || opts.faultRate);
  const delay = () => Math.max(0, (opts.latencyMs ?? 0) + (opts.jitterMs ? (random() * 2 - 1) * opts.jitterMs : 0));
  /** A 429's headers: `Retry-After` of `seconds` only if this provider sends one. */
  const tooMany = (seconds: number): Record<string, string> => (opts.retryAfter ? { 'retry-after': String(seconds) } : {});
  const refuse = (status: number, body: string, headers: Record<string, string> = {}, pauseSeconds = 1): ProviderVerdict => {
    const delayMs = delay();
    // The window opens when the 429 reaches the client (after the latency) and lasts the
    // Retry-After it was told, or without one a second (the least a client backs off).
    if (status === 429 && performance.now() >= pauseUntil) {
      pauseFrom = performance.now() + delayMs;
      pauseUntil = pauseFrom + pauseSeconds * 1000;
      pauseArrivals = 0;
    }
    return { kind: 'refuse', delayMs, status, headers: { 'content-type': body.startsWith('{') ? 'application/json' : 'text/plain', ...headers }, body };
  };

  /** Takes `cost` credits from the bucket, or says how long until it would hold them. */
  function take(cost: number): number {
    const rate = opts.requestsPerSecond!;
    const capacity = rate * (opts.burstSeconds ?? 1);
    const now = performance.now();
    if (bucketFull) {
      tokens = capacity;
      bucketFull = false;
    } else {
      tokens = Math.min(capacity, tokens + ((now - refilledAt) / 1000) * rate);
    }
    refilledAt = now;
    // A batch costing more than the whole bucket passes when the bucket is full.
    const need = Math.min(cost, capacity);
    if (tokens >= need) {
      tokens -= cost;
      return 0;
    }
    return ((need - tokens) / rate) * 1000;
  }

  return {
    enabled,
    /** Changes the behaviour from now on (a bench switches scenarios on one chain). */
    configure(next: RpcProviderOptions) {
      opts = { ...next };
      bucketFull = true;
    },
    /** Judges a parsed request body before it is handled. */
    admit(body: unknown): ProviderVerdict {
      if (!enabled()) return { kind: 'serve', delayMs: 0 };
      const calls = Array.isArray(body) ? (body as { method?: string }[]) : [body as { method?: string }];
      stats.requests++;
      const now = performance.now();
      if (now >= pauseFrom && now < pauseUntil) stats.maxArrivalsInPause = Math.max(stats.maxArrivalsInPause, ++pauseArrivals);
      if (opts.faultRate && random() < opts.faultRate) {
        const r = random();
        if (r < 1 / 3) {
          stats.faults.rateLimited++;
          return refuse(429, 'Too many requests', tooMany(1));
        }
        if (r < 2 / 3) {
          stats.faults.serverError++;
          return refuse(r < 0.5 ? 502 : 503, 'upstream unavailable');
        }
        stats.faults.timeout++;
        return { kind: 'hang' };
      }
      if (Array.isArray(body) && opts.batches === false) {
        stats.batchesRefused++;
        return refuse(400, BATCH_REFUSED);
      }
      const cost = calls.reduce((n, c) => n + creditsOf(c?.method), 0) || 1;
      if (opts.requestsPerSecond) {
        const waitMs = take(cost);
        if (waitMs > 0) {
          stats.rateLimited++;
          // Whole seconds, as HTTP's delta-seconds form has it; at least one.
          const seconds = Math.max(1, Math.ceil(waitMs / 1000));
          return refuse(429, 'Too many requests', tooMany(seconds), seconds);
        }
      }
      stats.calls += calls.length;
      stats.credits += cost;
      return { kind: 'serve', delayMs: delay() };
    },
    /** Answers as judged, after the latency: the served `text`, or the refusal; a hang never answers. */
    answer(res: http.ServerResponse, verdict: ProviderVerdict, text?: string) {
      if (verdict.kind === 'hang') return;
      const send =
        verdict.kind === 'refuse'
          ? () => void res.writeHead(verdict.status, verdict.headers).end(verdict.body)
          : () => void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      if (verdict.delayMs) setTimeout(send, verdict.delayMs);
      else send();
    },
    /** A `getTransaction` body went out: counts it when that signature's had gone out before. */
    servedTransaction(signature: string) {
      if (!enabled()) return;
      if (served.has(signature)) stats.refetched++;
      else served.add(signature);
    },
    stats: (): ProviderStats => structuredClone(stats),
    resetStats() {
      Object.assign(stats, fresh());
      served.clear();
      pauseUntil = 0;
    },
  };
}

export type RpcProvider = ReturnType<typeof createRpcProvider>;
