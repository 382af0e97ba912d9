import { builderRpcRate } from '../../cdk8s/lib/indexer';
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { createDatabase } from '../../core/db';
import { readLiveSchema } from '../../core/db/live-projection';
import { migrate } from '../../core/db/migrate';
import { inSchema, LIVE_SCHEMA, PROJECTION_SCHEMA_TABLES, projectionSchema } from '../../core/db/projection-schema';
import { PROJECTION_VERSION } from '../../core/db/projection-version';
import { IDL } from '../../core/events';
import { RPC_CREDITS } from '../../core/rpc-credits';
import { tableDigests } from '../../core/db/table-digests';
import type { ChainBlock } from './backfill-chain';
import { LATENCY, startChain } from './backfill-bench';
import { build, dropDatabase, freshDatabase, pct, REDIS_URL, spawnImage } from './support';

/**
 * `npm run bench -- reindex` (issue 39, D-425): what a re-index costs a tenant. The backfill
 * bench's chain of BENCH_TRANSACTIONS transactions behind its provider-like JSON-RPC; `public`
 * filled by the compiled indexer with no limit (not measured); then the chain goes on at
 * BENCH_LIVE_TPS transactions a second, the provider limits every client together to
 * BENCH_CREDITS credits a second (one API key for the tenant), and a live writer follows the chain
 * under that limit, alone for BENCH_BASELINE_SECONDS, then beside a builder (`INDEXER_MODE=build`,
 * the same settings but nine tenths of the plan as the kit renders it, or BENCH_BUILDER_CREDITS) until the builder switches the
 * pointer. Measured: the time from the builder's start to the switch, its rate against the
 * allowance, the live writer's lag behind the chain with and without the build, the PostgreSQL
 * space of both schemas at the switch; at the end, with the chain stopped and both writers at its
 * last slot, the built tables against the live ones.
 */

const TRANSACTIONS = Number(process.env.BENCH_TRANSACTIONS ?? 100_000);
const CREDITS = Number(process.env.BENCH_CREDITS ?? 100);
// The builder's own RPC_REQUESTS_PER_SECOND: nine tenths of the plan by default, as the kit renders it (D-444).
const BUILDER_CREDITS = Number(process.env.BENCH_BUILDER_CREDITS ?? builderRpcRate(CREDITS));
const LIVE_TPS = Number(process.env.BENCH_LIVE_TPS ?? 2);
const BASELINE_SECONDS = Number(process.env.BENCH_BASELINE_SECONDS ?? 60);
const SAMPLE_MS = 250;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => Promise<T | false>, timeoutMs: number, everyMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export async function run(): Promise<void> {
  build();
  const load0 = execFileSync('uptime').toString().trim();
  const schema = projectionSchema(PROJECTION_VERSION);
  const t0 = Date.now();
  const chain = await startChain(TRANSACTIONS);
  const { transactions, live: successful, lastLiveSlot } = chain.ready;
  process.stderr.write(`chain of ${transactions} transactions (${successful} successful, last at slot ${lastLiveSlot}): ${Date.now() - t0} ms\n`);
  const name = `bench_reindex_${process.pid}`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  const database = createDatabase({ url: databaseUrl, poolMax: 4 });
  const db = database.db;
  const children = new Set<ChildProcess>();
  const start = (mode: 'live' | 'build', rpc: { credits: number; concurrency: number; batch: number }) => {
    const env = {
      DATABASE_URL: databaseUrl, REDIS_URL, TENANT_ID: `bench-reindex-${process.pid}`, PROGRAM_ID: IDL.address, INDEXER_PORT: '0', API_HOST: '127.0.0.1', LOG_LEVEL: 'error',
      RPC_URL: chain.url, RPC_WS_URL: chain.url.replace('http', 'ws'), INDEXER_MODE: mode,
      RPC_REQUESTS_PER_SECOND: String(rpc.credits), RPC_CONCURRENCY: String(rpc.concurrency), RPC_BATCH_SIZE: String(rpc.batch),
    };
    const p = spawnImage('indexer', env, { args: ['--source', 'rpc', '--no-progress'] });
    children.add(p.child);
    p.child.once('exit', () => children.delete(p.child));
    return p;
  };
  const stop = async (c: ChildProcess) => {
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  const cursor = async (s: string) => Number((await db.one<{ s: string }>(`SELECT last_processed_slot AS s FROM ${s}.indexer_cursor WHERE id = 1`)).s);
  const count = async (s: string) => (await db.one<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.processed_transactions`)).n;
  const sizes = async () => {
    const rows = await db.any<{ schema: string; bytes: string }>(
      `SELECT n.nspname AS schema, sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND c.relname = ANY($1) AND n.nspname IN ($2, $3) GROUP BY n.nspname`,
      [PROJECTION_SCHEMA_TABLES, LIVE_SCHEMA, schema],
    );
    const of = (s: string) => Number(rows.find((r) => r.schema === s)?.bytes ?? 0);
    const { bytes } = await db.one<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
    return { live: of(LIVE_SCHEMA), built: of(schema), database: Number(bytes) };
  };

  // The live writer's lag: slots the chain produced beyond its cursor, and how long ago the oldest
  // of them was produced (0 when it is at the tip), sampled by phase.
  const producedAt = new Map<number, number>();
  let newest = lastLiveSlot;
  let phase: 'alone' | 'build' | undefined;
  const lag: Record<'alone' | 'build', { slots: number[]; ms: number[] }> = { alone: { slots: [], ms: [] }, build: { slots: [], ms: [] } };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      const p = phase;
      const c = p ? await cursor(LIVE_SCHEMA).catch(() => undefined) : undefined;
      if (p && c !== undefined) {
        let oldest: number | undefined;
        for (let s = c + 1; s <= newest && oldest === undefined; s++) oldest = producedAt.get(s);
        lag[p].slots.push(Math.max(0, newest - c));
        lag[p].ms.push(oldest === undefined ? 0 : at - oldest);
      }
      await sleep(SAMPLE_MS - (Date.now() - at));
    }
  })();

  try {
    // public filled to the chain's tip as fast as it goes: not what is measured.
    await chain.configure({ ...LATENCY });
    const tf = Date.now();
    const fill = start('live', { credits: 0, concurrency: 32, batch: 50 });
    await until('public at the chain tip', async () => (await cursor(LIVE_SCHEMA)) >= lastLiveSlot, 1_800_000);
    await stop(fill.child);
    process.stderr.write(`public filled without a limit: ${((Date.now() - tf) / 1000).toFixed(1)} s\n`);

    // One allowance for the tenant from now on; the chain grows; the live writer alone under it.
    await chain.configure({ ...LATENCY, requestsPerSecond: CREDITS });
    const rpc = { credits: CREDITS, concurrency: 8, batch: 1 };
    const liveWriter = start('live', rpc);
    await liveWriter.port;
    chain.grow(LIVE_TPS, (b: ChainBlock) => {
      producedAt.set(b.slot, b.at);
      newest = Math.max(newest, b.slot);
    });
    phase = 'alone';
    await sleep(BASELINE_SECONDS * 1000);
    const baselineStats = await chain.stats();

    // The builder, through the same allowance.
    phase = 'build';
    const tb = Date.now();
    const builder = start('build', { ...rpc, credits: BUILDER_CREDITS });
    const alone = (RPC_CREDITS.getTransaction! * successful + RPC_CREDITS.getSignaturesForAddress! * (Math.ceil(transactions / 1_000) + 1)) / CREDITS;
    let lastReport = tb;
    const switchedAfter = await until(
      'the switch',
      async () => {
        if (Date.now() - lastReport > 60_000) {
          lastReport = Date.now();
          process.stderr.write(`  ${((lastReport - tb) / 1000).toFixed(0)} s: built to slot ${await cursor(schema).catch(() => 0)}, live writer at ${await cursor(LIVE_SCHEMA)}, chain at ${newest}\n`);
        }
        return (await readLiveSchema(db)) === schema ? Date.now() - tb : false;
      },
      (3 * alone + 600) * 1000,
      250,
    );
    phase = undefined;
    const buildStats = await chain.stats();
    const space = await sizes();
    const [built, liveCount] = [await count(schema), await count(LIVE_SCHEMA)];
    process.stderr.write(`switched after ${(switchedAfter / 1000).toFixed(1)} s\n`);

    // The chain stops; both writers reach its last slot; the tables are compared there.
    const final = await chain.stopGrowing();
    const settledAt = await until(
      'both writers at the same last slot',
      async () => {
        const [a, b] = [await cursor(LIVE_SCHEMA), await cursor(schema)];
        await sleep(3_000);
        return a === b && a === (await cursor(LIVE_SCHEMA)) && b === (await cursor(schema)) ? a : false;
      },
      600_000,
      0,
    );
    const builtDb = createDatabase({ url: inSchema(databaseUrl, schema), poolMax: 2 });
    const [dl, db2] = [await tableDigests(db), await tableDigests(builtDb.db)];
    await builtDb.close();
    const differing = Object.keys(dl).filter((t) => JSON.stringify(dl[t]) !== JSON.stringify(db2[t]));
    await Promise.all([stop(liveWriter.child), stop(builder.child)]);

    const buildSeconds = switchedAfter / 1000;
    const served = buildStats.stats.credits - baselineStats.stats.credits;
    const baselineCredits = baselineStats.stats.credits / BASELINE_SECONDS;
    const stat = (xs: number[], f: (x: number) => string) => (xs.length ? `p50 ${f(pct(xs, 50))}, p99 ${f(pct(xs, 99))}, max ${f(Math.max(...xs))} (${xs.length} samples)` : 'no samples');
    const slots = (x: number) => String(x);
    const secs = (x: number) => `${(x / 1000).toFixed(1)} s`;
    const lines = [
      `reindex benchmark (${new Date().toISOString()}, node ${process.version}; ${transactions} transactions, ${successful} successful; ${CREDITS} credits/s shared by both writers (the builder pacing itself by ${BUILDER_CREDITS}); the chain growing by ${LIVE_TPS} tx/s; latency ${LATENCY.latencyMs} ± ${LATENCY.jitterMs} ms; RPC_CONCURRENCY ${rpc.concurrency}, RPC_BATCH_SIZE ${rpc.batch})`,
      `  builder start -> switch:        ${buildSeconds.toFixed(1)} s; the backfill alone at the whole allowance: ${alone.toFixed(0)} s (ratio ${(buildSeconds / alone).toFixed(2)})`,
      `  builder's rate:                 ${(built / buildSeconds).toFixed(1)} tx/s committed (${built} by the switch) = ${((built * RPC_CREDITS.getTransaction!) / buildSeconds / CREDITS).toFixed(2)} of the allowance in getTransaction credits`,
      `  credits served during the build: ${(served / buildSeconds).toFixed(1)}/s = ${(served / buildSeconds / CREDITS).toFixed(2)} of the allowance; 429s ${buildStats.stats.rateLimited - baselineStats.stats.rateLimited} (live writer alone: ${baselineStats.stats.rateLimited} in ${BASELINE_SECONDS} s, ${baselineCredits.toFixed(1)} credits/s)`,
      `  live writer's lag, alone:       slots ${stat(lag.alone.slots, slots)}; oldest slot not committed ${stat(lag.alone.ms, secs)}`,
      `  live writer's lag, during build: slots ${stat(lag.build.slots, slots)}; oldest slot not committed ${stat(lag.build.ms, secs)}`,
      `  space at the switch:            ${schema} ${mb(space.built)} beside public ${mb(space.live)} (${(space.built / space.live).toFixed(2)}×; ${built} and ${liveCount} transactions); database ${mb(space.database)}`,
      `  tables at slot ${settledAt} (chain stopped at ${final} transactions): ${differing.length ? `DIFFER: ${differing.join(', ')}` : `${schema} equals public (${Object.keys(dl).length} tables)`}`,
      `  load before: ${load0}`,
      `  load after:  ${execFileSync('uptime').toString().trim()}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    sampling = false;
    await sampler.catch(() => {});
    for (const c of children) c.kill('SIGKILL');
    chain.stop();
    await database.close();
    await dropDatabase(name);
  }
}
