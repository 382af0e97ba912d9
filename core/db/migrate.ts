import path from 'node:path';
import { Client } from 'pg';
import { runner } from 'node-pg-migrate';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../db/migrations');
export const MIGRATIONS_TABLE = 'schema_migrations';
// Arbitrary constant, distinct from node-pg-migrate's own lock id and from the indexer's
// per-tenant writer lock (core/db/locks.ts).
const MIGRATION_WAIT_LOCK = 7_246_001;

export interface MigrateResult {
  applied: string[];
}

/**
 * Applies every pending migration in db/migrations, in file-name order, each recorded in
 * `schema_migrations`. node-pg-migrate only *tries* its advisory lock and fails when a
 * second migrator holds it, so a blocking advisory lock is taken first on the same
 * connection: concurrent migrators (several replicas starting at once) queue up, and every
 * one after the first finds nothing to do.
 */
export async function migrate(opts: {
  databaseUrl: string;
  log?: (msg: string) => void;
  direction?: 'up' | 'down';
  count?: number;
}): Promise<MigrateResult> {
  const client = new Client({ connectionString: opts.databaseUrl, application_name: 'market-indexer-migrate' });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_WAIT_LOCK]);
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: MIGRATIONS_TABLE,
      direction: opts.direction ?? 'up',
      count: opts.count ?? Infinity,
      checkOrder: true,
      singleTransaction: true,
      log: opts.log ?? (() => {}),
    });
    return { applied: ran.map((m) => m.name) };
  } finally {
    // Session locks die with the connection; unlocking explicitly keeps a pooled
    // caller's connection clean too.
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_WAIT_LOCK]).catch(() => {});
    await client.end();
  }
}
