import { randomBytes } from 'node:crypto';
import { sendInOrder, type Redis } from '../../core/redis/client';
import type { Keys } from '../../core/redis/keys';
import type { Logger } from '../../core/telemetry/logger';

export interface Lease {
  ip: string;
  member: string;
}

/**
 * WebSocket connections per client IP, counted across every API replica (spec 8, decision
 * D-50). A connection holds a lease; closing the connection releases it; a replica that dies
 * without releasing stops renewing, and its leases expire after `ttlMs`.
 */
export interface ConnectionLeases {
  /** A lease, or undefined when the IP already holds `max` connections. */
  acquire(ip: string): Promise<Lease | undefined>;
  release(lease: Lease): void;
  close(): Promise<void>;
}

// One sorted set per IP: member = lease, score = expiry in Redis server time (ms), so replicas
// with skewed clocks agree. Expired members are dropped before counting.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;
// Renewal re-adds a lease that expired while this replica was stalled: the connection is
// alive, so it counts. A release (ZREM) is sent on the same connection after any renewal
// already in flight, so it cannot be undone by one.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

type LeaseRedis = Redis & {
  wsLeaseAcquire(key: string, max: number, ttlMs: number, member: string): Promise<number>;
  wsLeaseRenew(key: string, ttlMs: number, member: string): Promise<number>;
};

export function createMemoryLeases(opts: { max: number }): ConnectionLeases {
  const counts = new Map<string, number>();
  let n = 0;
  return {
    async acquire(ip) {
      const c = counts.get(ip) ?? 0;
      if (c >= opts.max) return undefined;
      counts.set(ip, c + 1);
      return { ip, member: String(++n) };
    },
    release(lease) {
      const c = (counts.get(lease.ip) ?? 1) - 1;
      if (c <= 0) counts.delete(lease.ip);
      else counts.set(lease.ip, c);
    },
    async close() {
      counts.clear();
    },
  };
}

export function createRedisLeases(opts: { redis: Redis; keys: Keys; max: number; ttlMs: number; logger: Logger }): ConnectionLeases {
  const { keys, max, ttlMs, logger } = opts;
  const redis = opts.redis as LeaseRedis;
  if (typeof redis.wsLeaseAcquire !== 'function') {
    redis.defineCommand('wsLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
    redis.defineCommand('wsLeaseRenew', { numberOfKeys: 1, lua: RENEW });
  }
  const replica = randomBytes(6).toString('hex');
  let n = 0;
  const held = new Map<string, Lease>();
  // While Redis is unreachable each replica still enforces the limit on its own connections.
  const fallback = createMemoryLeases({ max });
  const fallbackHeld = new Set<Lease>();

  const renew = setInterval(() => {
    if (!held.size) return;
    const renewals = [...held.values()].map((l) => (c: Pick<LeaseRedis, 'wsLeaseRenew'>) => c.wsLeaseRenew(keys.wsConnections(l.ip), ttlMs, l.member));
    sendInOrder(redis, renewals).catch((err: Error) => logger.warn({ err: err.message }, 'ws lease renewal failed'));
  }, Math.max(50, Math.floor(ttlMs / 3)));
  renew.unref();

  return {
    async acquire(ip) {
      const member = `${replica}:${++n}`;
      try {
        const ok = await redis.wsLeaseAcquire(keys.wsConnections(ip), max, ttlMs, member);
        if (!ok) return undefined;
        const lease = { ip, member };
        held.set(member, lease);
        return lease;
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'ws lease store unavailable: counting this replica only');
        const lease = await fallback.acquire(ip);
        if (lease) fallbackHeld.add(lease);
        return lease;
      }
    },
    release(lease) {
      if (fallbackHeld.delete(lease)) return fallback.release(lease);
      if (!held.delete(lease.member)) return;
      redis.zrem(keys.wsConnections(lease.ip), lease.member).catch((err: Error) => {
        // It expires after ttlMs without renewal anyway.
        logger.warn({ err: err.message }, 'ws lease release failed');
      });
    },
    async close() {
      clearInterval(renew);
      const leases = [...held.values()];
      held.clear();
      if (!leases.length) return;
      const releases = leases.map((l) => (c: Pick<Redis, 'zrem'>) => c.zrem(keys.wsConnections(l.ip), l.member));
      await sendInOrder(redis, releases).catch(() => undefined);
    },
  };
}
