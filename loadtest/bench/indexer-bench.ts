import os from 'node:os';
import { Client } from 'pg';
import { createDatabase } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { IDL, parseTransaction, type RawTransaction } from '../../core/events';
import { createShutdown } from '../../core/common';
import { loadConfig } from '../../core/config';
import { createRedisUpdateLog, type UpdateLog } from '../../core/redis/updates';
import { createRedis, redisReady } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { createLogger } from '../../core/telemetry/logger';
import { createMetrics } from '../../core/telemetry/metrics';
import { createIndexer } from '../../indexer/indexer';
import { pgBinaryArray } from '../../indexer/projection/pg-binary';
import { MarketSimulator } from '../../simulator/simulation';
import type { Source } from '../../indexer/sources/types';
import { measureWorkerSplit, stageBound } from './indexer-worker-bound';
import { ADMIN_URL, cpuSeconds, dropDatabase, freshDatabase, pct, postgresCpuSeconds, REDIS_URL, startProfile } from './support';

const TARGET_EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 2_000);

/**
 * Pre-generated batches, so chain simulation time is not counted as indexing time. They are
 * kept as JSON text and parsed when the indexer asks for them, as the RPC source parses its
 * responses. Held as objects, the whole chain stayed live in the heap: the indexer's CPU per
 * event was ~20 % higher and full garbage collections stalled it for 200–350 ms (the
 * commit-to-publish p99 outliers).
 */
const toText = (batch: RawTransaction[]) => Buffer.from(JSON.stringify(batch));
const fromText = (text: Buffer) => JSON.parse(text.toString()) as RawTransaction[];

function textSource(batches: Buffer[]): Source {
  return {
    name: 'bench',
    async *batches() {
      for (const b of batches) yield fromText(b);
    },
    chainTip: async () => null,
    connected: () => true,
    close: async () => {},
  };
}

/**
 * CPU seconds of the PostgreSQL processes working for this run: the sessions on its database
 * and the server's background writers (WAL writer, checkpointer, background writer). The whole
 * server's figure also counts whatever else uses it meanwhile (other benchmarks, test suites on
 * a shared machine), which made the CPU-bound limit swing by half between runs. Sessions are
 * read from pg_stat_activity every 200 ms, as a backend's CPU time can only be read while it
 * lives; null where PostgreSQL is not local.
 */
export function postgresCpuOf(database: string) {
  const admin = new Client({ connectionString: ADMIN_URL });
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
      [database],
    );
    for (const { pid } of rows) {
      try {
        const cpu = cpuSeconds(pid);
        if (!first.has(pid)) first.set(pid, cpu);
        last.set(pid, cpu);
      } catch {
        // exited between the query and the read
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let local = postgresCpuSeconds() !== null;
  return {
    async start() {
      if (!local) return;
      await admin.connect();
      await sample();
      timer = setInterval(() => void sample().catch(() => {}), 200);
    },
    async stop(): Promise<number | null> {
      if (!local) return null;
      clearInterval(timer);
      await sample();
      await admin.end();
      local = false;
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - first.get(pid)!;
      return total;
    },
  };
}

export async function run(): Promise<void> {
  const programId = IDL.address;
  const t0 = Date.now();
  const sim = new MarketSimulator({ seed: 1, programId, feeds: 3, wallets: 200, ordersPerSlot: 2 });
  const batches: Buffer[] = [];
  let current: RawTransaction[] = [];
  while (sim.truth().events < TARGET_EVENTS) {
    for (let i = 0; i < 200; i++) {
      current.push(...sim.nextBlock().transactions);
      if (current.length >= BATCH) {
        batches.push(toText(current));
        current = [];
      }
    }
  }
  if (current.length) batches.push(toText(current));
  const truth = sim.truth();
  const genMs = Date.now() - t0;
  process.stderr.write(`generated ${truth.events} events in ${truth.transactions} transactions over ${sim.slot} slots (${genMs} ms)\n`);

  // 1. The indexer, through its production loop (prepare/commit pipeline, publish to Redis).
  const name = `bench_indexer_${process.pid}`;
  const url = await freshDatabase(name);
  await migrate({ databaseUrl: url });
  const database = createDatabase({ url, poolMax: 4 });
  const config = loadConfig({ LOG_LEVEL: 'warn', PROGRAM_ID: programId, TENANT_ID: `bench-${process.pid}` });
  const logger = createLogger({ level: 'warn', service: 'bench', tenant: config.tenantId });
  const common = { config, logger, metrics: createMetrics({ processMetrics: false }), shutdown: createShutdown(logger) };
  let updates: UpdateLog | undefined;
  const redis = createRedis(REDIS_URL);
  redis.on('error', () => {});
  try {
    await redisReady(redis, 2_000);
    updates = createRedisUpdateLog({ redis, keys: createKeys(config.tenantId) });
  } catch {
    process.stderr.write('Redis not reachable: publishing is skipped\n');
  }
  const indexer = createIndexer({ common, db: database.db, pgp: database.pgp, databaseUrl: url, updates, source: textSource(batches), heartbeatMs: 60_000 });
  const publishMs: number[] = [];
  let applied = 0;
  let messages = 0;
  const phases = { parse: 0, ledger: 0, load: 0, apply: 0, write: 0, commit: 0 };
  indexer.onBatch((r, ms) => {
    applied += r.applied;
    messages += r.messages.length;
    if (r.messages.length) publishMs.push(ms);
    for (const k of Object.keys(phases) as (keyof typeof phases)[]) phases[k] += r.phases[k];
  });
  const profile = await startProfile(process.env.BENCH_PROFILE);
  const ownPg = postgresCpuOf(name);
  await ownPg.start();
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const pgCpuStart = postgresCpuSeconds();
  await indexer.run();
  const indexMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  const pgCpuEnd = postgresCpuSeconds();
  const serverCpu = pgCpuStart === null || pgCpuEnd === null ? null : pgCpuEnd - pgCpuStart;
  const pgCpu = await ownPg.stop();
  await profile();
  const deadLetters = (await database.db.one('SELECT count(*)::int AS n FROM dead_letters')).n as number;
  await database.close();
  redis.disconnect();
  if (process.env.BENCH_KEEP_DB) process.stderr.write(`kept database ${name} (BENCH_KEEP_DB)\n`);
  else await dropDatabase(name);

  // 2. The ceiling: the same events as plain multi-row inserts into a raw-event table.
  const rows = batches.flatMap((b) =>
    fromText(b).flatMap((tx) => {
      const p = parseTransaction(tx, programId);
      const bt = new Date((p.blockTime ?? 0) * 1000);
      return p.events.map((e) => ({ signature: p.signature, index: e.index, slot: p.slot, blockTime: bt, kind: e.event.kind, data: e.bytes }));
    }),
  );
  const rawName = `bench_raw_${process.pid}`;
  const rawUrl = await freshDatabase(rawName);
  const raw = new Client({ connectionString: rawUrl });
  await raw.connect();
  await raw.query(`CREATE TABLE raw_events (signature TEXT NOT NULL, event_index INTEGER NOT NULL, slot BIGINT NOT NULL,
    block_time TIMESTAMPTZ, kind TEXT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (signature, event_index))`);
  const rawStart = performance.now();
  const perBatch = Math.round(rows.length / batches.length);
  for (let i = 0; i < rows.length; i += perBatch) {
    const chunk = rows.slice(i, i + perBatch);
    await raw.query('BEGIN');
    await raw.query(
      `INSERT INTO raw_events SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::timestamptz[], $5::text[], $6::bytea[])`,
      // Binary array parameters, as the indexer sends them (D-60): the ceiling is the best
      // batched insert, not one the indexer beats by its encoding.
      [
        pgBinaryArray(chunk, 'text', (r) => r.signature),
        pgBinaryArray(chunk, 'int4', (r) => r.index),
        pgBinaryArray(chunk, 'int8', (r) => r.slot),
        pgBinaryArray(chunk, 'timestamptz', (r) => r.blockTime),
        pgBinaryArray(chunk, 'text', (r) => r.kind),
        pgBinaryArray(chunk, 'bytea', (r) => r.data),
      ],
    );
    await raw.query('COMMIT');
  }
  const rawMs = performance.now() - rawStart;
  await raw.end();
  await dropDatabase(rawName);

  const indexRate = (applied / indexMs) * 1000;
  const cores = os.availableParallelism();
  // 3. What a worker thread for parse and decode would leave on each thread (D-257).
  const split = measureWorkerSplit(batches, programId);
  const indexerUs = (cpu.user + cpu.system) / applied;
  const pgUs = pgCpu === null ? null : (pgCpu * 1e6) / applied;
  const f1 = (x: number) => x.toFixed(1);
  const bounds = pgUs === null ? [] : ([
    ['as it runs: indexer | PostgreSQL', [indexerUs, pgUs]],
    // The source still parses the JSON on the main thread, which now clones the batch both ways.
    ['worker fed objects: main | worker | PostgreSQL', [indexerUs - split.prepare + split.serializeRaw + split.deserializePrepared, split.deserializeRaw + split.prepare + split.serializePrepared, pgUs]],
    // The source's response text transferred as is: the worker parses the JSON too.
    ['worker fed text: main | worker | PostgreSQL', [indexerUs - split.jsonParse - split.prepare + split.deserializePrepared, split.jsonParse + split.prepare + split.serializePrepared, pgUs]],
  ] as const).map(([label, stages]): [string, string] => {
    const b = stageBound([...stages], cores);
    // The ratio alone flatters a split that adds CPU: the rate says whether it pays.
    return [`  ${label}`, `${stages.map(f1).join(' | ')} µs/event: at most ${Math.round(b.ratio * b.limit)} events/s, ${b.ratio.toFixed(2)} of its CPU-bound limit (${Math.round(b.limit)})`];
  });
  const cpuLimit = pgCpu === null ? 0 : (cores * applied) / ((cpu.user + cpu.system) / 1e6 + pgCpu);
  const rawRate = (rows.length / rawMs) * 1000;
  const table: [string, string][] = [
    ['events indexed', String(applied)],
    ['dead letters', String(deadLetters)],
    ['batches (transactions each)', `${batches.length} (${BATCH})`],
    ['indexer wall time', `${(indexMs / 1000).toFixed(2)} s`],
    ['indexer throughput', `${Math.round(indexRate)} events/s`],
    ['indexer process CPU (user + system)', `${((cpu.user + cpu.system) / 1e6).toFixed(2)} s, ${((cpu.user + cpu.system) / applied).toFixed(1)} µs/event`],
    ['PostgreSQL CPU (this run\'s sessions, WAL writer, checkpointer)', pgCpu === null ? 'n/a (not a local server)' : `${pgCpu.toFixed(2)} s, ${((pgCpu * 1e6) / applied).toFixed(1)} µs/event`],
    ['PostgreSQL server CPU (all its processes, other clients too)', serverCpu === null ? 'n/a' : `${serverCpu.toFixed(2)} s, ${((serverCpu * 1e6) / applied).toFixed(1)} µs/event`],
    ['raw batched insert (ceiling)', `${Math.round(rawRate)} events/s`],
    ['ratio indexer / ceiling', (indexRate / rawRate).toFixed(2)],
    // However well the indexer overlaps its work with PostgreSQL's, it cannot go faster than the
    // machine's cores can do the CPU work both spent per event.
    [
      `CPU-bound limit (indexer + PostgreSQL CPU on ${cores} cores)`,
      pgCpu === null ? 'n/a' : `${Math.round(cpuLimit)} events/s, ratio at most ${(cpuLimit / rawRate).toFixed(2)}`,
    ],
    // What the pipeline makes of that bound: 1.0 when indexer and PostgreSQL never wait for
    // each other. Other load on the machine takes cores from both and lowers it.
    ['throughput / CPU-bound limit', pgCpu === null ? 'n/a' : (indexRate / cpuLimit).toFixed(2)],
    ['commit-to-publish p50 / p99', `${pct(publishMs, 50).toFixed(2)} / ${pct(publishMs, 99).toFixed(2)} ms (${messages} messages)`],
    ['time per phase (ms)', Object.entries(phases).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')],
    [
      'parse and decode on one thread, µs/event (D-257)',
      `JSON.parse ${f1(split.jsonParse)}, prepare ${f1(split.prepare)}; structured clone (postMessage, send + receive): raw batch ${f1(split.serializeRaw)} + ${f1(split.deserializeRaw)}, prepared batch ${f1(split.serializePrepared)} + ${f1(split.deserializePrepared)}`,
    ],
    ['single-threaded stages and the share of the CPU-bound limit they allow', ''],
    ...bounds,
  ];
  const w = Math.max(...table.map(([k]) => k.length));
  process.stdout.write(`\nindexer benchmark (${new Date().toISOString()}, node ${process.version})\n`);
  for (const [k, v] of table) process.stdout.write(`  ${k.padEnd(w)}  ${v}\n`);
}
