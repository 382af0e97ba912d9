import type { Redis } from './client';
import type { Keys } from './keys';

/**
 * Remembers used auth nonces. `claim` is atomic: it returns true for the first use of a
 * (scope, nonce) pair within the TTL and false for every replay, on every API replica
 * that shares the store.
 */
export interface NonceStore {
  claim(scope: string, nonce: string): Promise<boolean>;
  close(): Promise<void>;
}

export function createRedisNonceStore(opts: { redis: Redis; keys: Keys; ttlSeconds: number }): NonceStore {
  return {
    async claim(scope, nonce) {
      const res = await opts.redis.set(opts.keys.nonce(scope, nonce), '1', 'EX', opts.ttlSeconds, 'NX');
      return res === 'OK';
    },
    async close() {},
  };
}

/** Single-process stand-in (embedded mode): same contract, per process. */
export function createMemoryNonceStore(opts: { ttlSeconds: number; now?: () => number }): NonceStore {
  const now = opts.now ?? Date.now;
  const expiries = new Map<string, number>();
  const sweep = setInterval(() => {
    const t = now();
    for (const [k, exp] of expiries) if (exp <= t) expiries.delete(k);
  }, 30_000);
  sweep.unref();
  return {
    async claim(scope, nonce) {
      const key = `${scope}\u0000${nonce}`;
      const t = now();
      const exp = expiries.get(key);
      if (exp !== undefined && exp > t) return false;
      expiries.set(key, t + opts.ttlSeconds * 1000);
      return true;
    },
    async close() {
      clearInterval(sweep);
      expiries.clear();
    },
  };
}
