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
  /**
   * A lease, or undefined when the IP already holds `max` connections (or `maxOverride`: the
   * appendix variant leases per API-key plan, D-158, under the owner `key:<id>` or `ip:<ip>`).
   */
  acquire(ip: string, maxOverride?: number): Promise<Lease | undefined>;
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
    async acquire(ip, maxOverride) {
      const c = counts.get(ip) ?? 0;
      if (c >= (maxOverride ?? opts.max)) return undefined;
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
  // Leases in Redis, and leases taken while Redis was unreachable that it has not seen yet.
  const held = new Map<string, Lease>();
  const unregistered = new Map<string, Lease>();
  // Every lease of this replica per IP: while Redis is unreachable it enforces the limit on
  // this replica's own connections (D-103).
  const local = new Map<string, number>();
  const count = (ip: string, by: number) => {
    const c = (local.get(ip) ?? 0) + by;
    if (c <= 0) local.delete(ip);
    else local.set(ip, c);
  };

  const renew = (l: Lease) => (c: Pick<LeaseRedis, 'wsLeaseRenew'>) => c.wsLeaseRenew(keys.wsConnections(l.ip), ttlMs, l.member);

  /**
   * Leases taken in fallback mode enter the shared count once Redis answers again (D-103):
   * added without a limit check (their connections exist), so an IP over its quota has new
   * connections refused until enough of them close.
   */
  let registering = false;
  async function register(): Promise<void> {
    if (registering || !unregistered.size || redis.status !== 'ready') return;
    registering = true;
    const leases = [...unregistered.values()];
    try {
      // One command per lease, each on its own (a Cluster pipeline may touch one node only):
      // a rare path, taken once after an outage.
      const results = await Promise.allSettled(leases.map((l) => renew(l)(redis)));
      leases.forEach((l, i) => {
        if (results[i]!.status === 'rejected') return;
        if (unregistered.delete(l.member)) held.set(l.member, l);
        // Closed while its registration was on the way: take it back out.
        else redis.zrem(keys.wsConnections(l.ip), l.member).catch(() => undefined);
      });
      if (leases.some((l) => held.has(l.member))) logger.info({ leases: leases.length }, 'ws leases taken without Redis are now counted in it');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'ws lease registration failed');
    } finally {
      registering = false;
    }
  }
  const onReady = () => void register();
  redis.on('ready', onReady);

  const renewal = setInterval(() => {
    void register();
    if (!held.size) return;
    sendInOrder(redis, [...held.values()].map(renew)).catch((err: Error) => logger.warn({ err: err.message }, 'ws lease renewal failed'));
  }, Math.max(50, Math.floor(ttlMs / 3)));
  renewal.unref();

  return {
    async acquire(ip, maxOverride) {
      const member = `${replica}:${++n}`;
      const lease = { ip, member };
      try {
        const ok = await redis.wsLeaseAcquire(keys.wsConnections(ip), maxOverride ?? max, ttlMs, member);
        if (!ok) return undefined;
        held.set(member, lease);
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'ws lease store unavailable: counting this replica only');
        if ((local.get(ip) ?? 0) >= (maxOverride ?? max)) return undefined;
        unregistered.set(member, lease);
      }
      count(ip, 1);
      return lease;
    },
    release(lease) {
      if (unregistered.delete(lease.member)) return count(lease.ip, -1);
      if (!held.delete(lease.member)) return;
      count(lease.ip, -1);
      redis.zrem(keys.wsConnections(lease.ip), lease.member).catch((err: Error) => {
        // It expires after ttlMs without renewal anyway.
        logger.warn({ err: err.message }, 'ws lease release failed');
      });
    },
    async close() {
      clearInterval(renewal);
      redis.off('ready', onReady);
      const leases = [...held.values()];
      held.clear();
      unregistered.clear();
      local.clear();
      if (!leases.length) return;
      const releases = leases.map((l) => (c: Pick<Redis, 'zrem'>) => c.zrem(keys.wsConnections(l.ip), l.member));
      await sendInOrder(redis, releases).catch(() => undefined);
    },
  };
}
