import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { TEST_REDIS_URL, runId, tenantPrefix } from './env';

export { TEST_REDIS_URL };

/** A tenant id no other suite or run uses; global teardown deletes its keys. */
export function testTenant(): string {
  return `${tenantPrefix(runId())}-${randomBytes(4).toString('hex')}`;
}

export function connectRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
}
