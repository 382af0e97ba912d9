import { randomBytes } from 'node:crypto';
import type { Redis } from './client';
import type { Keys } from './keys';

/**
 * Remembers used auth nonces. `claim` is atomic: it returns true for the first use of a
 * (scope, nonce) pair within the TTL and false for every replay, on every API replica
 * that shares the store. It also returns false when the store cannot show the nonce unused:
 * for one acceptance window after the store lost its state (D-102), a message dated
 * (`signedAt`, Unix seconds) such that it could have been used before the loss.
 */
export interface NonceStore {
  claim(scope: string, nonce: string, signedAt: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The store's marker, `<id>:<epoch>` (epoch in Redis server seconds, 0 for a store that lost
 * nothing), never expires. A claim whose replica had seen a marker and finds it missing, or
 * replaced by another, knows Redis lost its data (a restart without persistence, a failover to
 * a replica that never had the key, a flush): it writes a new marker with epoch = now. A
 * missing marker that no replica knew of is a new store: epoch 0.
 *
 * Within `window` (past + future allowance) seconds of a nonzero epoch, a message dated at or
 * before epoch + `future` is refused: a message used before the loss was dated at most
 * `future` seconds after its use. Returns `{1 or 0 (allowed), id}`. Run after the nonce's SET
 * NX, on the same connection, so it sees a state at least as new as the one that took the nonce.
 */
const EPOCH = `
local now = tonumber(redis.call('TIME')[1])
local known = ARGV[1]
local cur = redis.call('GET', KEYS[1])
local id, epoch
if cur then
  id, epoch = string.match(cur, '^([^:]+):(%d+)$')
  epoch = tonumber(epoch)
end
if not id then
  id = ARGV[5]
  epoch = (known == '') and 0 or now
  redis.call('SET', KEYS[1], id .. ':' .. epoch)
elseif known ~= '' and known ~= id and epoch == 0 then
  -- Re-created as new by a replica that had seen nothing, after a loss this replica saw.
  epoch = now
  redis.call('SET', KEYS[1], id .. ':' .. epoch)
end
local allowed = 1
if epoch > 0 and now - epoch < tonumber(ARGV[3]) and tonumber(ARGV[2]) <= epoch + tonumber(ARGV[4]) then allowed = 0 end
return {allowed, id}
`;

type EpochRedis = Redis & {
  nonceEpoch(key: string, known: string, signedAt: number, window: number, future: number, newId: string): Promise<[number, string]>;
};

export function createRedisNonceStore(opts: {
  redis: Redis;
  keys: Keys;
  ttlSeconds: number;
  /** How far a signed message's timestamp may lie behind and ahead of now, in seconds. */
  maxPastSeconds: number;
  maxFutureSeconds: number;
}): NonceStore {
  const redis = opts.redis as EpochRedis;
  if (typeof redis.nonceEpoch !== 'function') redis.defineCommand('nonceEpoch', { numberOfKeys: 1, lua: EPOCH });
  const window = opts.maxPastSeconds + opts.maxFutureSeconds;
  // The marker id this replica last saw: what lets it tell a lost store from a new one.
  let known = '';
  const learn = (cur: string | null) => {
    const id = cur?.split(':')[0];
    if (id) known = id;
  };
  redis.get(opts.keys.nonceEpoch).then(learn, () => undefined);
  return {
    async claim(scope, nonce, signedAt) {
      // Two commands, not one script: a nonce key and the marker need not share a Redis
      // Cluster slot. Sent together; the marker is read second.
      const [set, [allowed, id]] = await Promise.all([
        opts.redis.set(opts.keys.nonce(scope, nonce), '1', 'EX', opts.ttlSeconds, 'NX'),
        redis.nonceEpoch(opts.keys.nonceEpoch, known, signedAt, window, opts.maxFutureSeconds, randomBytes(6).toString('hex')),
      ]);
      known = id;
      return set === 'OK' && allowed === 1;
    },
    async close() {},
  };
}

/**
 * Single-process stand-in (embedded mode): same contract, per process. It starts empty with
 * its process, which cannot tell a restart from a first start (D-102).
 */
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
