import createClient, { type Client } from 'openapi-fetch';
import { walletHeaders } from './auth';
import { createClock, type Clock } from './clock';
import { errorOf, retryAfterSeconds } from './errors';
import type { paths } from './openapi';
import type { Signer } from './signer';

/**
 * Typed REST (D-523): `openapi-fetch` over the types `openapi-typescript` reads from
 * `api-reference/openapi.yaml`. It is a 6 KB wrapper of `fetch` (Node 20 and browsers alike)
 * that adds nothing at run time but URL and body serialization: every path, parameter and body
 * is checked by the compiler against the document itself, and a changed document is a type
 * error in the client, not a surprise in production. Generated clients (orval, openapi-generator)
 * ship classes per operation and their own HTTP layer; zod validation of every answer would
 * cost the browser bundle most of its size for a contract the API's own tests hold it to.
 */

export interface RetryPolicy {
  /** Attempts of a GET in all (1: no retry). */
  attempts: number;
  /** Backoff without a `Retry-After`: full jitter over base × 2^attempt, capped at max. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown with its `retryAfter`. */
  maxRetryAfterMs: number;
}
export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 250, maxDelayMs: 4000, maxRetryAfterMs: 30_000 };

export interface ClientOptions {
  /** The API's root, e.g. `https://alpha.markets.example` or `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** Signs the requests made through `signed` (and positions subscriptions). */
  signer?: Signer;
  /** The `domain` signed messages name: one of the API's `PUBLIC_HOSTS`. Default: the host name of `baseUrl`. */
  domain?: string;
  /** The `chain` signed messages name (the API's `CHAIN_ID`); left out, the API takes its own. */
  chain?: string;
  /** `x-api-key` on every request (an API-key plan's tier). */
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  fetch?: (request: Request) => Promise<Response>;
  /** For tests: the jitter's randomness and the waits. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How long to wait before attempt `attempt + 1` (0-based) of a GET that was answered `res`. */
export function retryDelay(res: Response, attempt: number, policy: RetryPolicy, random: () => number): number | undefined {
  if (res.status !== 429 && res.status !== 503) return undefined;
  const after = retryAfterSeconds(res.headers.get('retry-after'));
  if (after !== undefined) {
    const ms = after * 1000;
    if (ms > policy.maxRetryAfterMs) return undefined;
    // Not before the API said; a little after, spread so that clients told the same second do not return together.
    return ms + random() * Math.min(1000, policy.baseDelayMs + ms * 0.1);
  }
  return random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
}

export interface RestClient {
  /** Public operations: `rest.GET('/api/v1/markets', { params: { query: { limit: 10 } } })`. */
  rest: Client<paths>;
  /** The same operations, each attempt signed by `signer` with a fresh nonce. */
  signed: Client<paths>;
  clock: Clock;
  options: ClientOptions;
}

export function createRestClient(options: ClientOptions): RestClient {
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? sleepFor;
  const base = options.fetch ?? ((r: Request) => globalThis.fetch(r));
  const clock = createClock();
  const domain = options.domain ?? new URL(options.baseUrl).hostname;

  const transport = (sign: boolean) => async (request: Request): Promise<Response> => {
    const method = request.method.toUpperCase();
    // Only a read is repeated: a POST that timed out or was refused may still have been acted on.
    const idempotent = method === 'GET' || method === 'HEAD';
    const body = idempotent ? undefined : await request.arrayBuffer();
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers(request.headers);
      if (options.apiKey) headers.set('x-api-key', options.apiKey);
      if (sign) {
        if (!options.signer) throw new TypeError('a signed request needs a signer (createMarketClient({ signer }))');
        // Signed again for every attempt: a new nonce and timestamp (the API refuses a nonce it has seen).
        for (const [k, v] of Object.entries(await walletHeaders(options.signer, method, request.url, { domain, clock, chain: options.chain }))) headers.set(k, v);
      }
      const offsetBefore = clock.offsetMs;
      const sentAt = Date.now();
      const res = await base(new Request(request.url, { method, headers, body, signal: request.signal }));
      clock.observe(res.headers.get('date'), sentAt, Date.now());
      if (!idempotent || attempt + 1 >= policy.attempts) return res;
      // A signature refused because this clock was off: the offset is corrected now, sign again.
      if (sign && res.status === 401 && clock.offsetMs !== offsetBefore) continue;
      const wait = retryDelay(res, attempt, policy, random);
      if (wait === undefined) return res;
      await res.body?.cancel();
      await sleep(wait);
    }
  };

  const make = (sign: boolean) => {
    const c = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ''), fetch: transport(sign) });
    c.use({
      // A refused answer throws its typed error (D-524): `data` is there whenever the call returns.
      async onResponse({ response }) {
        if (response.ok || response.status === 304) return undefined;
        const text = await response.clone().text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        throw errorOf(response.status, body, response.headers);
      },
    });
    return c;
  };
  return { rest: make(false), signed: make(true), clock, options };
}

/** The body of a call that returned (errors throw): `const { data } = await ok(rest.GET(...))` without the `undefined`. */
export async function ok<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  const r = await call;
  if (r.data === undefined) throw new TypeError(`no body in the ${r.response.status} answer`);
  return r.data;
}

/**
 * Every item of an offset-paginated list, fetched a page at a time as the loop asks for them:
 * `for await (const m of paginate((offset, limit) => …))`.
 */
export async function* paginate<T>(page: (offset: number, limit: number) => Promise<{ items: T[]; total: number }>, o: { limit?: number; offset?: number } = {}): AsyncGenerator<T> {
  const limit = o.limit ?? 100;
  let offset = o.offset ?? 0;
  for (;;) {
    const { items, total } = await page(offset, limit);
    yield* items;
    offset += items.length;
    if (items.length === 0 || offset >= total) return;
  }
}
