import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { migrate } from '../../core/db/migrate';
import { createRedis, redisReady } from '../../core/redis/client';
import { createKeys } from '../../core/redis/keys';
import { build, cpuSeconds, dropDatabase, freshDatabase, pct, REDIS_URL, ROOT, spawnImage, spawnListening } from './support';
import { Receivers } from './ws-receivers';
import type { PublishJob } from './ws-publisher';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATES = (process.env.BENCH_RATES ?? '10,100,250,500,1000').split(',').map(Number);
const CHANNEL = 'orderbook:1';
/** Processes the clients are spread over (each one event loop). */
const CLIENT_PROCS = Number(process.env.BENCH_CLIENT_PROCS ?? 2);
/**
 * The targets to run, in this order: `api`, `alt` (BENCH_WS_ALT_API), `raw` (ws.send per
 * client), `corked` (the same, corked per socket). The ratios need `corked`.
 */
const TARGETS = (process.env.BENCH_WS_TARGETS ?? (process.env.BENCH_WS_ALT_API ? 'api,alt,raw,corked' : 'api,raw,corked')).split(',');
/** With a directory, the API runs with --cpu-prof and writes its profile there on a graceful exit. */
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
/**
 * Another build's API entry point (`dist/server/main.js` of a checkout built with `npm run
 * build`), run as the target `API alt` in the same run: before and after under the same load.
 */
const ALT_API = process.env.BENCH_WS_ALT_API;

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

interface Row {
  target: string;
  rate: number;
  published: number;
  deliveredPerSec: number;
  complete: number;
  p50: number;
  p99: number;
  rss: number;
  /** Server CPU per delivered message, in microseconds: what the fan-out costs, whoever is saturated. */
  cpuPerMsgUs: number;
  cpuPct: number;
  /** CPU of the clients' processes (100 = one core): near 100 % per process they are the bound. */
  clientCpuPct: number;
}

/**
 * One phase: the publisher process sends `rate` updates/s for SECONDS; then this waits until
 * every client has every update (or 5 s without progress). Times are absolute (timeOrigin +
 * now) so the publisher's and the clients' clocks compare.
 */
async function phase(target: string, job: PublishJob, publisher: ChildProcess, rx: Receivers, pid: number): Promise<Row> {
  await rx.reset();
  let rss = rssMb(pid);
  const cpu0 = cpuSeconds(pid);
  const clientCpu = () => rx.pids().reduce((a, p) => a + cpuSeconds(p), 0);
  const own0 = clientCpu();
  const t0 = performance.now();
  const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 250);
  const done = new Promise<{ sent: [number, number][]; start: number }>((resolve) =>
    publisher.once('message', (m: { type: string; sent: [number, number][]; start: number }) => resolve(m)),
  );
  publisher.send(job);
  const { sent, start } = await done;
  let progress = -1;
  let idleSince = performance.now();
  for (;;) {
    const delivered = await rx.delivered();
    if (delivered >= sent.length * CLIENTS) break;
    if (delivered !== progress) {
      progress = delivered;
      idleSince = performance.now();
    } else if (performance.now() - idleSince > 5_000) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  clearInterval(sampler);
  const cpu = cpuSeconds(pid) - cpu0;
  await rx.collect();
  const own = clientCpu() - own0;
  const wall = (performance.now() - t0) / 1000;
  let delivered = 0;
  let lastAt = start;
  const latencies: number[] = [];
  for (const [s, t] of sent) {
    const n = rx.count.get(s) ?? 0;
    delivered += n;
    const l = rx.last.get(s);
    if (l !== undefined) lastAt = Math.max(lastAt, l);
    if (n === CLIENTS && l !== undefined) latencies.push(l - t);
  }
  return {
    target,
    rate: job.rate,
    published: sent.length,
    deliveredPerSec: delivered / ((lastAt - start) / 1000),
    complete: delivered / (sent.length * CLIENTS),
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    rss,
    cpuPerMsgUs: (cpu * 1e6) / Math.max(1, delivered),
    cpuPct: (cpu / wall) * 100,
    clientCpuPct: (own / wall) * 100,
  };
}

export async function run(): Promise<void> {
  const name = `bench_ws_${process.pid}`;
  const databaseUrl = await freshDatabase(name);
  await migrate({ databaseUrl });
  const tenant = `bench-ws-${process.pid}`;
  // Each API run has its own tenant: the update log's seq starts again at 1, as the publisher
  // counts, and the per-IP connection leases of an earlier run cannot refuse the clients.
  let runs = 0;
  const nextTenant = () => `${tenant}-${(runs += 1)}`;
  const redis = createRedis(REDIS_URL);
  await redisReady(redis);
  const rows: Row[] = [];
  const rawChannel = `bench-ws-raw-${process.pid}`;
  // The API as production runs it: the compiled build under plain node (tsx adds ~60 MB of RSS).
  build();
  const startApi = (entry: string | undefined, tenantId: string, flags: string[] = []) =>
    spawnImage('api', {
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      TENANT_ID: tenantId,
      API_PORT: '0',
      API_HOST: '127.0.0.1',
      WS_MAX_CONNECTIONS_PER_IP: String(CLIENTS + 10),
      WS_MAX_CLIENTS: String(CLIENTS),
    }, { entry, flags });
  const publisher = spawnListening('loadtest/bench/ws-publisher.ts', { REDIS_URL });
  const children = [publisher.child];
  let idleRss = 0;
  try {
    await publisher.port;
    const job = (mode: PublishJob['mode'], rate: number, firstSeq: number, tenantId: string): PublishJob => ({
      mode,
      rate,
      seconds: SECONDS,
      firstSeq,
      channel: CHANNEL,
      rawChannel,
      tenant: tenantId,
    });
    const sweep = async (target: string, mode: PublishJob['mode'], url: string, pid: number, subscribe: boolean, tenantId: string) => {
      const rx = new Receivers(CLIENTS, CLIENT_PROCS, CHANNEL);
      await rx.connect(url, subscribe);
      if (target === 'API /ws') idleRss = rssMb(pid);
      let next = 1;
      for (const rate of RATES) {
        const r = await phase(target, job(mode, rate, next, tenantId), publisher.child, rx, pid);
        next += r.published;
        rows.push(r);
      }
      rx.close();
    };
    const runApi = async (target: string, entry: string | undefined, flags: string[] = []) => {
      const tenantId = nextTenant();
      const api = startApi(entry, tenantId, flags);
      children.push(api.child);
      await sweep(target, 'api', `ws://127.0.0.1:${await api.port}/ws`, api.child.pid!, true, tenantId);
      // A graceful exit, so that a --cpu-prof process writes its profile (SIGKILL would lose it).
      const exited = new Promise((resolve) => api.child.once('exit', resolve));
      api.child.kill('SIGTERM');
      const cut = setTimeout(() => api.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(cut);
    };
    const runRaw = async (target: string, cork: '0' | '1') => {
      const raw = spawnListening('loadtest/bench/ws-raw-server.ts', { REDIS_URL, RAW_CHANNEL: rawChannel, RAW_CORK: cork });
      children.push(raw.child);
      await sweep(target, 'raw', `ws://127.0.0.1:${await raw.port}`, raw.child.pid!, false, tenant);
      raw.child.kill('SIGKILL');
    };
    const runners: Record<string, () => Promise<void>> = {
      api: async () => {
        await runApi('API /ws', undefined, PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []);
        if (PROFILE_DIR) process.stderr.write(`API CPU profile written to ${PROFILE_DIR}\n`);
      },
      alt: () => (ALT_API ? runApi('API alt', path.relative(ROOT, path.resolve(ALT_API))) : Promise.resolve()),
      raw: () => runRaw('raw ws', '0'),
      corked: () => runRaw('raw corked', '1'),
    };
    for (const t of TARGETS) {
      const runner = runners[t];
      if (!runner) throw new Error(`BENCH_WS_TARGETS: unknown target ${t} (${Object.keys(runners).join(', ')})`);
      await runner();
    }

    const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
    process.stdout.write(
      `\nWebSocket fan-out (${new Date().toISOString()}; ${CLIENTS} clients on ${CHANNEL} in ${CLIENT_PROCS} client processes; publisher in its own process; API from dist/ under node; ${SECONDS} s per rate)\n`,
    );
    process.stdout.write(`API process RSS with ${CLIENTS} clients idle: ${fmt(idleRss, 1)} MB\n\n`);
    process.stdout.write('target    updates/s  published  delivered msg/s  complete   p50 ms   p99 ms   server RSS MB  server CPU %  CPU µs/msg  clients CPU %\n');
    for (const r of rows) {
      process.stdout.write(
        `${r.target.padEnd(10)} ${fmt(r.rate).padStart(9)}  ${fmt(r.published).padStart(9)}  ${fmt(r.deliveredPerSec).padStart(15)}  ${fmt(r.complete * 100, 1).padStart(7)}%  ${fmt(r.p50, 1).padStart(7)}  ${fmt(r.p99, 1).padStart(7)}  ${fmt(r.rss, 1).padStart(14)}  ${fmt(r.cpuPct, 0).padStart(11)}  ${fmt(r.cpuPerMsgUs, 2).padStart(10)}  ${fmt(r.clientCpuPct, 0).padStart(13)}\n`,
      );
    }
    const of = (t: string, rate: number) => rows.find((r) => r.target === t && r.rate === rate);
    // The targets of issue 25: delivered msg/s >= 0.95x and p99 <= 2x the raw corked broadcast's,
    // and, whoever is saturated (the clients share the cores), the server's CPU per message.
    process.stdout.write('\nAPI / raw corked, same run (targets: msg/s >= 0.95, p99 <= 2; CPU µs/msg: lower is cheaper):\n');
    for (const rate of RATES) {
      const a = of('API /ws', rate);
      const c = of('raw corked', rate);
      if (!c) continue;
      for (const [label, x] of [['API', a], ['API alt', of('API alt', rate)]] as const) {
        if (!x) continue;
        process.stdout.write(
          `  ${fmt(rate).padStart(6)}/s ${label.padEnd(7)}: msg/s ${fmt(x.deliveredPerSec / c.deliveredPerSec, 2)}  p99 ${fmt(x.p99 / c.p99, 2)}  CPU µs/msg ${fmt(x.cpuPerMsgUs / c.cpuPerMsgUs, 2)}  RSS ${fmt(x.rss, 0)} MB\n`,
        );
      }
    }
  } finally {
    children.forEach((c) => c.kill('SIGKILL'));
    for (let i = 1; i <= runs; i++) {
      const keys = await redis.keys(`${createKeys(`${tenant}-${i}`).prefix}*`);
      if (keys.length) await redis.del(...keys);
    }
    redis.disconnect();
    await dropDatabase(name);
  }
}
