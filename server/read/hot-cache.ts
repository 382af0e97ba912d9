import { hash } from 'node:crypto';
import type { Response } from 'express';
import fresh from 'fresh';
import { channelPattern } from '../../core/live/channels';
import { PSUBSCRIBED_KINDS } from '../../core/redis/acl';
import type { Bus, Unsubscribe } from '../../core/redis/bus';

export interface CachedResponse {
  status: number;
  /** The JSON body, serialized once and sent as is to every caller. */
  body: Buffer;
  /** A strong validator derived from the body, so every replica gives the same body the same tag. */
  etag: string;
}

/**
 * Sends a cached response as it was serialized, with its ETag, or 304 with no body when the
 * request's `If-None-Match` names that tag (D-48).
 */
export function sendCached(res: Response, c: CachedResponse): void {
  res.setHeader('ETag', c.etag);
  const inm = res.req.headers['if-none-match'];
  // Only If-None-Match is handed to `fresh`: Express's own check also treats a request's
  // `Cache-Control: no-cache` as "send the body", and fetch (undici in Node) adds that header to
  // every conditional request, so Node clients would never get a 304. That directive is meant
  // for caches; an origin evaluates If-None-Match regardless (RFC 9110 13.1.2).
  if (inm !== undefined && c.status === 200 && fresh({ 'if-none-match': inm }, { etag: c.etag })) {
    res.status(304).end();
    return;
  }
  // Written directly: Express's `send` would look the type up, re-check freshness and hash
  // nothing useful on every hot read. Node itself leaves the body out of a HEAD answer.
  res.statusCode = c.status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', c.body.length);
  res.end(c.body);
}

const JSON_TYPE = 'application/json; charset=utf-8';

type Load = () => Promise<{ status: number; json: unknown }>;

export interface HotCache {
  get(key: string, load: Load): Promise<CachedResponse>;
  /**
   * Sends `key`'s response (`sendCached`), loading it first on a miss. A hit is sent at once,
   * without a promise: it is what nearly every hot read is.
   */
  send(res: Response, key: string, load: Load): void | Promise<void>;
  invalidate(): void;
  size(): number;
  close(): Promise<void>;
}

/**
 * Hot reads (current market, market pages, market detail, top of book) served from memory.
 * The indexer's bus messages (`market:*`, `orderbook:*`, published after each commit) drop the
 * cache; the TTL bounds staleness when no bus reaches this process. A generation counter keeps
 * a read that started before an invalidation from storing its (older) result, and concurrent
 * misses of one key share a single database read.
 */
export function createHotCache(opts: { bus?: Bus; ttlMs?: number; now?: () => number; maxEntries?: number }): HotCache {
  const ttl = opts.ttlMs ?? 1_000;
  // Keys come from clients (every market page offset, every market's detail): without a bound,
  // a crawl between two invalidations, or any crawl while no bus reaches this process, would
  // keep every response it asked for. A 50-market page is ~16 KB: 1,000 entries of 100 markets
  // are ~32 MB.
  const maxEntries = opts.maxEntries ?? 1_000;
  const now = opts.now ?? Date.now;
  const entries = new Map<string, { value: CachedResponse; expires: number }>();
  const inflight = new Map<string, Promise<CachedResponse>>();
  let generation = 0;
  const subs: Promise<Unsubscribe>[] = [];
  const invalidate = () => {
    generation += 1;
    entries.clear();
    inflight.clear();
  };
  // Every entry lives for the same TTL and is (re)inserted at the end, so the Map's order is
  // expiry order: the expired and, when full, the oldest entries are at its front.
  const store = (key: string, value: CachedResponse) => {
    const t = now();
    entries.delete(key);
    for (const [k, e] of entries) {
      if (e.expires > t && entries.size < maxEntries) break;
      entries.delete(k);
    }
    entries.set(key, { value, expires: t + ttl });
  };
  // Positions never change a hot read: only market and book changes drop the cache.
  if (opts.bus) for (const kind of PSUBSCRIBED_KINDS) subs.push(opts.bus.subscribe(channelPattern(kind), invalidate));

  async function get(key: string, load: Load): Promise<CachedResponse> {
    const hit = entries.get(key);
    if (hit && hit.expires > now()) return hit.value;
    let pending = inflight.get(key);
    if (!pending) {
      const started = generation;
      pending = load().then(({ status, json }) => {
        const body = Buffer.from(JSON.stringify(json));
        const value = { status, body, etag: `"${hash('sha1', body, 'base64url')}"` };
        if (generation === started) store(key, value);
        return value;
      });
      inflight.set(key, pending);
      pending.then(
        () => inflight.get(key) === pending && inflight.delete(key),
        () => inflight.get(key) === pending && inflight.delete(key),
      );
    }
    return pending;
  }

  return {
    get,
    send(res, key, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now()) return sendCached(res, hit.value);
      return get(key, load).then((c) => sendCached(res, c));
    },
    invalidate,
    size: () => entries.size,
    async close() {
      await Promise.all(subs.map(async (s) => (await s)()));
      entries.clear();
    },
  };
}
