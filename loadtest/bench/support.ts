import { execFile, execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type autocannon from 'autocannon';
import { Client } from 'pg';
import { IMAGE } from '../../core/constants';
import type { Db } from '../../core/db';

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

export const ROOT = path.resolve(__dirname, '../..');

/** `npm run build`, so a benchmark measures the processes as production runs them. */
export const build = () => execFileSync('bash', ['scripts/build.sh'], { cwd: ROOT, stdio: 'ignore' });

/**
 * A process entry point as a child, resolving `port` when it reports `listening` over IPC.
 * Compiled entry points (dist/) run under plain node, as in production; sources under tsx.
 */
export function spawnListening(file: string, env: Record<string, string>, nodeFlags: string[] = [], args: string[] = []): { child: ChildProcess; port: Promise<number> } {
  const child = fork(path.resolve(ROOT, file), args, {
    cwd: ROOT,
    execArgv: [...nodeFlags, ...(file.endsWith('.js') ? [] : ['--import', 'tsx'])],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { type?: string; port?: number }) => m?.type === 'listening' && resolve(m.port!));
    child.once('exit', (code) => reject(new Error(`${file} exited ${code}`)));
  });
  port.catch(() => {});
  return { child, port };
}

/**
 * A process of the image exactly as its command runs it (`IMAGE.commands` in core/constants.ts:
 * the compiled entry point under plain node with the command's node flags, e.g. the indexer's
 * semi-space size), so a benchmark measures what production runs from the one definition the
 * Dockerfile and the kit use. `entry` swaps in another build's entry point (a before/after in the
 * same run) under the same flags; `flags` adds a bench's own (a CPU profile) after the image's.
 * Call `build()` first.
 */
export function spawnImage(
  name: keyof typeof IMAGE.commands,
  env: Record<string, string>,
  opts: { args?: string[]; flags?: string[]; entry?: string } = {},
): { child: ChildProcess; port: Promise<number> } {
  const command = IMAGE.commands[name];
  return spawnListening(opts.entry ?? command[command.length - 1]!, env, [...command.slice(1, -1), ...(opts.flags ?? [])], opts.args ?? []);
}

/**
 * With a file name (BENCH_PROFILE), records a V8 CPU profile of the measured phase only,
 * so the setup (chain generation, database creation) does not drown the part that counts.
 * Returns the function that stops and writes it; a no-op without a file name.
 */
/**
 * The environment a bench's API process runs under: production, as the image runs it, with the
 * rate limits raised out of the way of the load and a tenant of the bench's own. `RPC_URL` points
 * at a closed port: production refuses to start without it (/tx/*), and no bench builds a
 * transaction through the API.
 */
export const benchApiEnv = (databaseUrl: string): Record<string, string> => ({
  LOG_LEVEL: 'silent',
  NODE_ENV: 'production',
  RPC_URL: 'http://127.0.0.1:1',
  DATABASE_URL: databaseUrl,
  REDIS_URL,
  API_PORT: '0',
  API_HOST: '127.0.0.1',
  TENANT_ID: `bench-${process.pid}`,
  PUBLIC_READ_RATE_LIMIT_MAX_REQUESTS: '100000000',
  RATE_LIMIT_MAX_REQUESTS: '100000000',
});

export async function startProfile(file: string | undefined): Promise<() => Promise<void>> {
  if (!file) return async () => {};
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
    process.stderr.write(`CPU profile of the measured phase written to ${file}\n`);
  };
}

/** CPU seconds (user + system) the process used so far; /proc counts in USER_HZ (100 on Linux). */
export const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

/**
 * CPU seconds used so far by every process of this machine's PostgreSQL server (backends,
 * WAL writer, checkpointer...), so a benchmark can tell whether the server or the client is
 * the bottleneck. Null where the database is not a local PostgreSQL visible in /proc.
 * Exited backends stop counting, so take both readings while the benchmark's connections live.
 */
export function postgresCpuSeconds(): number | null {
  const host = new URL(ADMIN_URL).hostname;
  if (!['localhost', '127.0.0.1', '[::1]', ''].includes(host)) return null;
  let total = 0;
  let found = false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += cpuSeconds(Number(pid));
      found = true;
    } catch {
      // the process exited between the listing and the read
    }
  }
  return found ? total : null;
}

/**
 * A wallet-signed route under 64 connections for `seconds`, each request with its own nonce and
 * signature by the wallet of `seed` (loadtest/bench/signed-load.ts, in its own process).
 */
export async function loadSigned(url: string, seed: Uint8Array, seconds: number) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(__dirname, 'signed-load.ts')], {
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, SIGNED_URL: url, SIGNED_SECONDS: String(seconds), SIGNED_SEED: Buffer.from(seed).toString('hex'), SIGNED_PREPARE: String(Math.max(10_000, seconds * 6_000)) },
  });
  const r = JSON.parse(stdout) as autocannon.Result & { prepared: number; used: number };
  if (r.used > r.prepared) process.stderr.write(`signed load: ${r.used - r.prepared} signatures made during the run\n`);
  return { rps: r.requests.average, p99: r.latency.p99, total: r.requests.total, errors: r.errors + r.non2xx };
}

/**
 * `n` closed markets written straight into `markets` (through the projector millions would take
 * hours), with what the projector keeps for them: market_counts and the block counts of
 * GET /markets (D-130, recounted as migration 0007 fills them). `perEpoch` markets share each
 * epoch id, as markets of several feeds do. Then VACUUM ANALYZE: autovacuum keeps the
 * visibility map current in production, which index-only scans need.
 */
export async function insertBenchMarkets(db: Db, n: number, perEpoch = 1): Promise<void> {
  await db.none(
    `INSERT INTO markets (id, address, market_id, settlement_mint, state, t_start, t_end, total_volume, created_at, updated_at, created_slot, created_signature)
     SELECT 10000000 + g, 'bench' || g, 1000001 + (g - 1) / $2, 'mint', 5, to_timestamp(g * 60), to_timestamp(g * 60 + 60), g, now(), now(), 1, 's'
       FROM generate_series(1, $1) g`,
    [n, perEpoch],
  );
  await db.none('UPDATE market_counts c SET n = (SELECT count(*) FROM markets m WHERE m.state = c.state)');
  await db.none(
    `DELETE FROM market_list_blocks;
     WITH c AS (SELECT market_list_block(market_id) AS block, state, count(*) AS n FROM markets GROUP BY 1, 2)
     INSERT INTO market_list_blocks (block, state, n)
     SELECT b.block, s.state, COALESCE(c.n, 0)
       FROM (SELECT DISTINCT block FROM c) b CROSS JOIN market_counts s LEFT JOIN c ON c.block = b.block AND c.state = s.state`,
  );
  await db.none('VACUUM ANALYZE markets, market_list_blocks');
}
