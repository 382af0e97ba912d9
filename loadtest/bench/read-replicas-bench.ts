import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { SETTINGS } from '../../core/config/settings';
import { createDatabase } from '../../core/db';
import { migrate } from '../../core/db/migrate';
import { startHaPostgres, type HaPostgres } from '../../local/tenant/ha-postgres';
import { openChainNode } from '../../simulator/node';
import { benchApiEnv, build, cpuSeconds, insertBenchMarkets, pct, REDIS_URL, spawnImage } from './support';

/**
 * `npm run bench -- read-replicas` (issue 51): what reading from a replica costs and buys, on the
 * tenant harness's HA PostgreSQL (Patroni + etcd + HAProxy over three PostgreSQL 15 instances,
 * synchronous replication; local/tenant/ha-postgres.ts) and the compiled API and indexer.
 * 1. The primary's CPU per 1,000 reads, hot (one URL, the API's hot cache) and cold (distinct
 *    pages), with the API on the primary alone and with `DATABASE_READ_URL` on the ro front.
 * 2. The replica's lag (the API's `service_db_replica_lag_slots`) while the indexer backfills
 *    BENCH_BACKFILL_SECONDS of chain history at full speed, and the share of reads the replica served.
 * 3. BENCH_KILLS kills of the primary's node (SIGKILL of Patroni, postmaster and backends): kill
 *    to the writer's first commit on the promoted primary (the indexer restarted at once when it
 *    exits, as a supervisor would), and the slowest read of a 20 reads/s loop meanwhile; the
 *    killed node is started again and rejoins before the next kill.
 */
const READS = Number(process.env.BENCH_READS ?? 2_000);
const KILLS = Number(process.env.BENCH_KILLS ?? 3);
const BACKFILL_SECONDS = Number(process.env.BENCH_BACKFILL_SECONDS ?? 900);
const PROGRAM_ID = SETTINGS.PROGRAM_ID.default;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds of one instance: its postmaster and every process it forked. */
function instanceCpu(dataDir: string): number {
  const master = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuSeconds(master);
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      if (ppid === master) total += cpuSeconds(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function load(urls: string[], concurrency = 16): Promise<number> {
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < urls.length) {
        const r = await fetch(urls[next++]!);
        await r.arrayBuffer();
        if (r.status !== 200) failed++;
      }
    }),
  );
  return failed;
}

const cursorOn = async (url: string) => {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  c.on('error', () => {});
  try {
    await c.connect();
    const { rows } = await c.query<{ slot: string; r: boolean }>('SELECT last_processed_slot AS slot, pg_is_in_recovery() AS r FROM indexer_cursor WHERE id = 1');
    return { slot: Number(rows[0]!.slot), recovery: rows[0]!.r };
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => {});
  }
};

/** One series of the API's /metrics: the first line of `name` whose labels include `label` (every line carries the default labels). */
const metric = async (port: number, name: string, label = ''): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(label));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
};

export async function run(): Promise<void> {
  build();
  const ha: HaPostgres = await startHaPostgres({ instances: 3, synchronous: true, log: (l) => process.stderr.write(`${l}\n`) });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'read-replicas-chain-'));
  const children: { kill(s?: NodeJS.Signals): unknown }[] = [];
  try {
    await ha.healthy(2);
    const name = `bench_replicas_${process.pid}`;
    const admin = new Client({ connectionString: ha.rwUrl() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const rw = ha.rwUrl(name);
    const ro = ha.roUrl(name);
    await migrate({ databaseUrl: rw });
    const seed = createDatabase({ url: rw, poolMax: 2 });
    await insertBenchMarkets(seed.db, 50_000);
    await seed.close();
    await ha.healthy(2);
    const leaderNode = async () => {
      const l = await ha.leader();
      return ha.nodes.find((n) => n.name === l)!;
    };

    // 1. CPU per 1,000 reads.
    const rows: string[][] = [];
    for (const withReplica of [false, true]) {
      const api = spawnImage('api', { ...benchApiEnv(rw), ...(withReplica ? { DATABASE_READ_URL: ro } : {}) });
      children.push(api.child);
      const port = await api.port;
      const base = `http://127.0.0.1:${port}/api/v1`;
      await load(Array.from({ length: 200 }, (_, i) => `${base}/markets?limit=20&offset=${i * 20}`));
      await sleep(1_500);
      for (const kind of ['hot', 'cold'] as const) {
        const urls = kind === 'hot' ? Array.from({ length: READS }, () => `${base}/markets?limit=20`) : Array.from({ length: READS }, (_, i) => `${base}/markets?limit=20&offset=${(i * 20) % 40_000}`);
        const primary = await leaderNode();
        const replicas = ha.nodes.filter((n) => n !== primary);
        const before = { p: instanceCpu(primary.dataDir), r: replicas.reduce((s, n) => s + instanceCpu(n.dataDir), 0) };
        const failed = await load(urls);
        const after = { p: instanceCpu(primary.dataDir), r: replicas.reduce((s, n) => s + instanceCpu(n.dataDir), 0) };
        rows.push([withReplica ? 'with replica' : 'primary only', kind, `${(((after.p - before.p) * 1000) / (READS / 1000)).toFixed(0)} ms`, `${(((after.r - before.r) * 1000) / (READS / 1000)).toFixed(0)} ms`, String(failed)]);
      }
      api.child.kill('SIGTERM');
      await sleep(500);
    }
    process.stdout.write('\nPostgreSQL CPU per 1,000 reads (GET /markets?limit=20)\n| API reads from | reads | primary CPU | replicas CPU | failed |\n|---|---|---|---|---|\n');
    for (const r of rows) process.stdout.write(`| ${r.join(' | ')} |\n`);

    // 2. The replica's lag while the indexer backfills.
    writeFileSync(path.join(dataDir, 'simulation.json'), JSON.stringify({ seed: 5, epochSeconds: 86_400, feeds: 1, startTime: Math.floor(Date.now() / 1000) - BACKFILL_SECONDS }));
    const chain = openChainNode({ programId: PROGRAM_ID, dataDir });
    const endpoints = await chain.rpc.listen(0);
    const stopChain = chain.runRealtime();
    const tenant = `bench-replicas-${process.pid}`;
    const api = spawnImage('api', { ...benchApiEnv(rw), TENANT_ID: tenant, DATABASE_READ_URL: ro });
    children.push(api.child);
    const apiPort = await api.port;
    const startIndexer = () => {
      const p = spawnImage('indexer', { DATABASE_URL: rw, REDIS_URL, TENANT_ID: tenant, PROGRAM_ID, INDEXER_PORT: '0', RPC_URL: endpoints.url, RPC_WS_URL: endpoints.wsUrl, LOG_LEVEL: 'error' }, { args: ['--source', 'rpc', '--no-progress'] });
      children.push(p.child);
      // A supervisor's restart: at once (the kubelet's first back-off is 10 s).
      p.child.once('exit', () => {
        if (!stopped) startIndexer();
      });
      return p;
    };
    let stopped = false;
    startIndexer();
    const tip = () => Math.floor((BACKFILL_SECONDS * 1000) / 400);
    const lags: number[] = [];
    const t0 = Date.now();
    const readsBefore = { p: await metric(apiPort, 'service_db_reads_total', 'pool="primary"'), r: await metric(apiPort, 'service_db_reads_total', 'pool="replica"') };
    for (;;) {
      await fetch(`http://127.0.0.1:${apiPort}/api/v1/markets?limit=5`).then((r) => r.arrayBuffer());
      const lag = await metric(apiPort, 'service_db_replica_lag_slots');
      if (Number.isFinite(lag)) lags.push(lag);
      const c = await cursorOn(rw);
      if ((c?.slot ?? 0) >= tip() || Date.now() - t0 > 600_000) break;
      await sleep(250);
    }
    const backfillS = (Date.now() - t0) / 1000;
    const readsAfter = { p: await metric(apiPort, 'service_db_reads_total', 'pool="primary"'), r: await metric(apiPort, 'service_db_reads_total', 'pool="replica"') };
    const share = (readsAfter.r - readsBefore.r) / (readsAfter.r - readsBefore.r + readsAfter.p - readsBefore.p);
    process.stdout.write(
      `\nBackfill of ${tip()} slots in ${backfillS.toFixed(0)} s: replica lag p50 ${pct(lags, 50)} / p99 ${pct(lags, 99)} / max ${lags.length ? Math.max(...lags) : 'none'} slots (${lags.length} samples); reads served by the replica ${(share * 100).toFixed(0)} %\n`,
    );

    // 3. Kills.
    const kills: { commitMs: number; slowestReadMs: number; failedReads: number }[] = [];
    for (let i = 0; i < KILLS; i++) {
      await ha.healthy(2, 180_000);
      await sleep(3_000);
      const old = (await ha.leader())!;
      const before = (await cursorOn(rw))!.slot;
      let reading = true;
      let slowest = 0;
      let failedReads = 0;
      const reader = (async () => {
        while (reading) {
          const s = Date.now();
          const r = await fetch(`http://127.0.0.1:${apiPort}/api/v1/markets?limit=5&offset=${Math.floor(Math.random() * 1000)}`).catch(() => undefined);
          await r?.arrayBuffer();
          if (r?.status !== 200) failedReads++;
          slowest = Math.max(slowest, Date.now() - s);
          await sleep(50);
        }
      })();
      const killedAt = Date.now();
      ha.kill(old);
      for (;;) {
        const c = await cursorOn(rw);
        if (c && !c.recovery && c.slot > before && (await ha.leader()) !== old) break;
        if (Date.now() - killedAt > 180_000) throw new Error('no commit on a promoted primary within 3 minutes');
        await sleep(100);
      }
      const commitMs = Date.now() - killedAt;
      reading = false;
      await reader;
      kills.push({ commitMs, slowestReadMs: slowest, failedReads });
      process.stderr.write(`kill ${i + 1} (${old}): writer committing after ${commitMs} ms, slowest read ${slowest} ms, ${failedReads} failed\n`);
      ha.restart(old);
    }
    stopped = true;
    stopChain();
    const ms = kills.map((k) => k.commitMs);
    process.stdout.write(
      `\n${KILLS} kills of the primary's node (Patroni TTL ${ha.ttlSeconds} s, lease 10 s, indexer restarted at once): kill → writer's first commit p50 ${pct(ms, 50)} ms / max ${Math.max(...ms)} ms; slowest read ${Math.max(...kills.map((k) => k.slowestReadMs))} ms; failed reads ${kills.reduce((n, k) => n + k.failedReads, 0)}\n`,
    );
    await chain.close();
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await ha.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
