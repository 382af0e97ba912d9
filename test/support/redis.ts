import { randomBytes } from 'node:crypto';
import { createRedis, isCluster, type Redis } from '../../core/redis/client';
import { TEST_REDIS_URL, runId, tenantPrefix } from './env';
import { startRedisCluster } from './redis-server';

export { TEST_REDIS_URL };

/** A tenant id no other suite or run uses; global teardown deletes its keys. */
export function testTenant(): string {
  return `${tenantPrefix(runId())}-${randomBytes(4).toString('hex')}`;
}

/** A test's client of the shared Redis, or of `url` (a Cluster too): it queues commands until connected. */
export function connectRedis(url = TEST_REDIS_URL): Redis {
  return createRedis(url, { enableOfflineQueue: true, commandTimeout: undefined });
}

/** Subscribers of a pub/sub channel; on a Cluster, summed over its nodes (a subscriber sits on one). */
export async function numsub(redis: Redis, channel: string): Promise<number> {
  const nodes = isCluster(redis) ? redis.nodes('all') : [redis];
  const counts = await Promise.all(nodes.map(async (n) => ((await n.pubsub('NUMSUB', channel)) as [string, number])[1]));
  return counts.reduce((a, b) => a + b, 0);
}

/** A Redis a suite runs against: its URL, and what to do when the suite ends. */
export interface RedisTarget {
  url: string;
  close(): Promise<void>;
}

/** The shared Redis, and a 3-master Redis Cluster of the suite's own: suites run on both (describe.each). */
export const REDIS_TARGETS: { name: string; start(): Promise<RedisTarget> }[] = [
  { name: 'one Redis', start: async () => ({ url: TEST_REDIS_URL, close: async () => {} }) },
  { name: 'a 3-master Redis Cluster', start: startRedisCluster },
];
