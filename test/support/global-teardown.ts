import { Client } from 'pg';
import Redis from 'ioredis';
import { ADMIN_DATABASE_URL, TEST_REDIS_URL, runId, tenantPrefix } from './env';

/** Drops whatever this run created, including what a failed suite left behind. */
export default async function globalTeardown(): Promise<void> {
  const run = runId();
  const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE $1`,
    [`${run}\\_%`],
  );
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  const roles = await admin.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [`${run}\\_%`]);
  const tenantRoles = await admin.query<{ rolname: string }>('SELECT rolname FROM pg_roles WHERE rolname LIKE $1', [`${tenantPrefix(run)}-%`]);
  roles.rows.push(...tenantRoles.rows);
  for (const { rolname } of roles.rows) await admin.query(`DROP ROLE IF EXISTS "${rolname}"`).catch(() => {});
  await admin.end();

  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `t:${tenantPrefix(run)}-*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}
