/** Where the suite finds its services; overridable for machines with other ports. */
export const ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Set by global-setup for the whole run: prefix of every database and tenant it creates. */
export function runId(): string {
  const id = process.env.MI_TEST_RUN_ID;
  if (!id) throw new Error('MI_TEST_RUN_ID is not set: run the suite through jest (global-setup)');
  return id;
}

export const templateDatabaseName = (run: string) => `${run}_tpl`;

export function databaseUrl(name: string): string {
  const u = new URL(ADMIN_DATABASE_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Tenant ids must be DNS labels (no underscores): this run's tenants start with this. */
export const tenantPrefix = (run: string) => run.replace(/_/g, '-');
