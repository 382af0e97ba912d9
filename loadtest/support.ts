import { Client } from 'pg';

/** Shared by the benchmarks: where they make their scratch databases and Redis tenants. */
export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const dbUrl = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

export async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** An empty database named `name` (dropped first if a crashed run left it). */
export async function freshDatabase(name: string): Promise<string> {
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  return dbUrl(name);
}

export const dropDatabase = (name: string) => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);

/** The p-th percentile (nearest rank) of xs. */
export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
