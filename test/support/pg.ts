import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { migrate } from '../../core/db/migrate';
import { ADMIN_DATABASE_URL, databaseUrl, runId, templateDatabaseName } from './env';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/**
 * Waits (bounded) for the suite's own connections to finish closing, then drops; FORCE only
 * ends whatever a failed test leaked.
 */
async function dropDatabase(name: string): Promise<void> {
  await admin(async (c) => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const { rows } = await c.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      if (rows[0]?.n === 0 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/**
 * A database of this suite's own: a copy of the migrated template by default, or empty
 * (`{ migrated: false }`) for migration tests. Drop it in afterAll; teardown drops any
 * that a failed suite left.
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const run = runId();
  const name = `${run}_${randomBytes(4).toString('hex')}`;
  const template = opts.migrated === false ? 'template0' : templateDatabaseName(run);
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => dropDatabase(name),
  };
}

/**
 * A migrated database outside a Jest run's global setup (the tenant suite has none, so no run id
 * and no template): named `<prefix>_<random>`, migrated here; drop it when done.
 */
export async function createStandaloneDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE template0`));
  const url = databaseUrl(name);
  await migrate({ databaseUrl: url });
  return { name, url, drop: () => dropDatabase(name) };
}

export interface TestRole {
  name: string;
  /** The URL of `database` as this role (trust authentication here, so no password). */
  url(database: string): string;
  drop(): Promise<void>;
}

/**
 * A login role of this run's own (roles are cluster-wide: `<run>_<suffix>_<random>`), for tests
 * of what one tenant's role can do on another's database. Drop it in afterAll (after the
 * databases it was granted anything on); teardown drops any that a failed suite left.
 */
export async function createTestRole(suffix: string): Promise<TestRole> {
  const name = `${runId()}_${suffix}_${randomBytes(3).toString('hex')}`;
  await admin((c) => c.query(`CREATE ROLE "${name}" LOGIN`));
  return {
    name,
    url: (database) => {
      const u = new URL(databaseUrl(database));
      u.username = name;
      u.password = '';
      return u.toString();
    },
    drop: () => admin(async (c) => {
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [name]);
      await c.query(`DROP ROLE IF EXISTS "${name}"`);
    }).then(() => undefined),
  };
}
