import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import Redis from 'ioredis';
import { migrate } from '../../core/db/migrate';
import { ADMIN_DATABASE_URL, TEST_REDIS_URL, databaseUrl, templateDatabaseName } from './env';

/**
 * One run id per `jest` invocation: every database this run creates is named `<run>_*` and
 * every Redis tenant `<run>-*`, so concurrent runs never collide and teardown finds all
 * of them. A migrated template database makes a fresh per-suite database a cheap copy.
 */
export default async function globalSetup(): Promise<void> {
  const run = `mitest_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  process.env.MI_TEST_RUN_ID = run;

  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(`test suite needs PostgreSQL at ${ADMIN_DATABASE_URL} (set TEST_DATABASE_URL): ${String(err)}`);
  }
  const tpl = templateDatabaseName(run);
  await admin.query(`CREATE DATABASE "${tpl}"`);
  await admin.end();
  await migrate({ databaseUrl: databaseUrl(tpl) });

  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(`test suite needs Redis at ${TEST_REDIS_URL} (set TEST_REDIS_URL): ${String(err)}`);
  } finally {
    redis.disconnect();
  }
}
